// Signing in through an OpenID provider, in process against a real provider (oidc-provider): the browser
// flow to a cookie session, a first sign-in making an account, linking by a verified address only, the
// one-time code of mode=code, and the refusals with their pages.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ConfigOverrides, expectProblem, testApp, testConfig } from "../helpers.ts";
import { PUBLIC_URL, roundTrip, type TestIdp, testIdp } from "../support/oidc.ts";

let idp: TestIdp;
beforeAll(async () => {
  idp = await testIdp();
});
afterAll(() => idp.stop());

function oidcApp(config: ConfigOverrides = {}) {
  const base = testConfig();
  return testApp({
    config: {
      mail: { ...base.mail, publicUrl: PUBLIC_URL },
      oidc: { providers: [idp.settings], returnUrls: ["https://app.example.com/signed-in"] },
      ...config,
    },
    oidcProviders: idp.providers,
  });
}

describe("the browser flow", () => {
  test("GET auth/oidc lists the providers for sign-in buttons", async () => {
    const { call } = await oidcApp();
    const listed = await call("GET", "/svc-api/v1/auth/oidc");
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      providers: [{ name: "test", label: "Test IdP", url: "/svc-api/v1/auth/oidc/test" }],
    });
  });

  test("a first sign-in makes an account without a password and signs in with a cookie session", async () => {
    idp.idp.account = {
      sub: "first-1",
      email: "First.One@example.test",
      email_verified: true,
      preferred_username: "firstone",
    };
    const { call, store } = await oidcApp();
    const { start, callback } = await roundTrip(call, "test");
    expect(start.headers.get("location")).toStartWith(`${idp.idp.issuer}/auth?`);
    expect(callback!.status).toBe(303);
    expect(callback!.headers.get("location")).toBe(`${PUBLIC_URL}/svc/admin`);
    // Where it lands is the console itself, not a 404.
    const landing = await call("GET", new URL(callback!.headers.get("location")!).pathname);
    expect([landing.status, landing.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const cookies = callback!.headers.getSetCookie();
    expect(cookies.some((c) => c.startsWith("svc_oidc=;") && c.includes("Max-Age=0"))).toBe(true);
    const session = cookies.find((c) => c.startsWith("svc_refresh="))!;
    expect(session).toContain("HttpOnly");
    expect(session).toContain("SameSite=Strict");
    const user = await store.users.findByLogin("firstone");
    expect(user).toMatchObject({ email: "first.one@example.test", passwordHash: "" });
    expect(user!.emailVerifiedAt).not.toBeNull();
    // The cookie works as a login's: a refresh gives a token whose session says how it signed in.
    const refresh = await call("POST", "/svc-api/v1/auth/refresh", {
      headers: { cookie: session.split(";")[0]!, origin: PUBLIC_URL, "content-type": "application/json" },
    });
    expect(refresh.status).toBe(200);
    const me = await call("GET", "/svc-api/v1/auth/sessions", { token: refresh.body.token });
    expect(me.body.items?.[0]?.amr ?? me.body[0]?.amr).toEqual(["ext"]);
  });

  test("the account made has no password: a login with any password is refused as a wrong one", async () => {
    idp.idp.account = { sub: "nopw-1", email: "nopw@example.test", email_verified: true, preferred_username: "nopw" };
    const { call } = await oidcApp();
    await roundTrip(call, "test");
    const guess = await call("POST", "/svc-api/v1/auth/login", {
      body: { username: "nopw", password: "correct horse battery" },
    } as never);
    expectProblem(guess, 401, "invalid_credentials");
  });
});
