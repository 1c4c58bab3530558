// A cookie-mode sign-in from a page on another site than svc's: the browser would drop the SameSite=Strict
// cookie set in answer, so svc refuses it, 400 cookie_cross_site naming the fix, and starts no session.
// And the signed-out page load's question, "is there a session?": refresh with mode cookie and no cookie.
import { describe, expect, test } from "bun:test";
import { expectProblem, testApp, type TestAppOptions } from "../helpers.ts";
import { mfaApp, LOGIN, VERIFY } from "../support/mfa.ts";

const REFRESH = "/svc-api/v1/auth/refresh";
const RESET = "/svc-api/v1/auth/password-reset";
const APP = "http://localhost:5173";

async function crossSiteApp(options: TestAppOptions = {}) {
  const t = await testApp({
    config: { corsOrigins: [APP, "https://app.example.com", "https://app.example.net"] },
    ...options,
  });
  const { password } = await t.signUp("ann");
  const login = (headers: Record<string, string>, mode = "cookie") =>
    t.call("POST", LOGIN, { body: { username: "ann", password, mode }, headers });
  return { ...t, login };
}

describe("a cookie-mode login from another site: 400 cookie_cross_site, no cookie, no session", () => {
  test("an app on localhost and svc on 127.0.0.1 (by their Origin and Host): refused, naming the fix", async () => {
    const { login, call } = await crossSiteApp();
    const reply = await login({ origin: APP, host: "127.0.0.1:8080" });
    expectProblem(reply, 400, "cookie_cross_site");
    expect(reply.body.title).toBe("Session cookie would be dropped");
    expect(reply.body.detail).toContain(`${APP} is on another site than svc (http://127.0.0.1:8080)`);
    expect(reply.body.detail).toContain("both on localhost, not localhost and 127.0.0.1");
    expect(reply.headers.getSetCookie()).toEqual([]);
    // The sign-up's session and this json one: the refused login started none.
    const json = await login({ origin: APP, host: "127.0.0.1:8080" }, "json");
    expect((await call("GET", "/svc-api/v1/auth/sessions", { token: json.body.token })).body).toHaveLength(2);
  });

  test("the browser's Sec-Fetch-Site: cross-site is refused whatever the Origin; same-site is let through", async () => {
    const { login } = await crossSiteApp();
    expectProblem(await login({ origin: APP, "sec-fetch-site": "cross-site" }), 400, "cookie_cross_site");
    // svc on localhost:8080 and the app on localhost:5173: one site, another origin.
    const sameSite = await login({ origin: APP, "sec-fetch-site": "same-site" });
    expect(sameSite.status).toBe(200);
    expect(sameSite.headers.getSetCookie()).toHaveLength(1);
  });

  test("without Sec-Fetch-Site: the same host or parent domain and scheme is one site; anything else is not", async () => {
    const { login } = await crossSiteApp();
    const svc = { host: "svc.example.com", "x-forwarded-proto": "https" };
    const allowed = await crossSiteApp({ config: { trustProxy: 1, corsOrigins: ["https://app.example.com"] } });
    const parent = await allowed.login({ origin: "https://app.example.com", ...svc });
    expect(parent.status).toBe(200);
    expect(parent.headers.getSetCookie()[0]).toStartWith("__Host-svc_refresh=");
    const other = await crossSiteApp({
      config: { trustProxy: 1, corsOrigins: ["https://app.example.net", "http://svc.example.com"] },
    });
    expectProblem(await other.login({ origin: "https://app.example.net", ...svc }), 400, "cookie_cross_site");
    // Another scheme on the same host: another site to a browser too.
    expectProblem(await other.login({ origin: "http://svc.example.com", ...svc }), 400, "cookie_cross_site");
    // svc's own origin, and one on svc's host: fine.
    expect((await login({ origin: "http://localhost" })).status).toBe(200);
    expect((await login({ origin: APP })).status).toBe(200);
  });

  test("an unlisted origin is still 403 csrf_refused; json mode from another site answers as before", async () => {
    const { login } = await crossSiteApp();
    expectProblem(await login({ origin: "https://evil.example", host: "127.0.0.1" }), 403, "csrf_refused");
    const json = await login({ origin: APP, host: "127.0.0.1:8080" }, "json");
    expect(json.status).toBe(200);
    expect(json.body.refresh_token).toBeString();
  });

  test("a password reset in cookie mode from another site: refused before the code is looked at", async () => {
    const { call } = await crossSiteApp();
    const body = { username: "ann", reset_code: "ABCD-EFGH-IJKL", new_password: "a brand new staple", mode: "cookie" };
    const headers = { origin: APP, "sec-fetch-site": "cross-site" };
    expectProblem(await call("POST", RESET, { body, headers }), 400, "cookie_cross_site");
  });

  test("the second step of a cookie-mode login from another site: refused, the mfa token unspent", async () => {
    const app = await mfaApp({ config: { corsOrigins: [APP] } });
    const ann = await app.enrolled("ann");
    const first = await app.call("POST", LOGIN, {
      body: { username: "ann", password: ann.password, mode: "cookie" },
      headers: { origin: "http://localhost" },
    });
    const body = { mfa_token: first.body.mfa_token, code: app.codeOf(ann.totp) };
    const crossSite = { origin: APP, "sec-fetch-site": "cross-site" };
    expectProblem(await app.call("POST", VERIFY, { body, headers: crossSite }), 400, "cookie_cross_site");
    expect((await app.call("POST", VERIFY, { body, headers: { origin: APP } })).status).toBe(200);
  });
});

describe("refresh with mode cookie: is there a session?", () => {
  test("no session cookie: 204 with no body and no cookie set, whatever the origin", async () => {
    const { call } = await crossSiteApp();
    const pages: Record<string, string>[] = [
      { origin: "http://localhost" },
      { origin: APP, "sec-fetch-site": "cross-site" },
    ];
    for (const headers of pages) {
      const reply = await call("POST", REFRESH, { body: { mode: "cookie" }, headers });
      expect(reply.status).toBe(204);
      expect(reply.text).toBe("");
      expect(reply.headers.getSetCookie()).toEqual([]);
    }
  });

  test("with the cookie: the session renewed as without mode", async () => {
    const { login, call } = await crossSiteApp();
    const signedIn = await login({ origin: "http://localhost" });
    const cookie = Bun.Cookie.parse(signedIn.headers.getSetCookie()[0]!);
    const reply = await call("POST", REFRESH, {
      body: { mode: "cookie" },
      headers: { origin: "http://localhost", cookie: `svc_refresh=${cookie.value}` },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.user.username).toBe("ann");
    expect(reply.headers.getSetCookie()[0]).toStartWith("svc_refresh=");
  });

  test("without mode, no cookie is still 400; mode is cookie alone, and never with refresh_token", async () => {
    const { call } = await crossSiteApp();
    expectProblem(await call("POST", REFRESH, { body: {} }), 400, "validation_failed");
    const wrong = await call("POST", REFRESH, { body: { mode: "json" } });
    expectProblem(wrong, 400, "validation_failed");
    expect(wrong.body.errors).toEqual([{ field: "mode", message: 'must be "cookie"' }]);
    const both = await call("POST", REFRESH, { body: { mode: "cookie", refresh_token: "x" } });
    expectProblem(both, 400, "validation_failed");
    expect(both.body.errors).toEqual([{ field: "mode", message: "must be left out when refresh_token is sent" }]);
  });
});
