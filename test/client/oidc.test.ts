// @svc/client signing in through an OpenID provider (docs/client/oidc.md), against the app in process and a
// real provider (oidc-provider): the providers, signInWith's address, a mode=code sign-in traded by
// exchangeCode, the identities linked (linking on purpose, unlinking refused while it is the last way in),
// and the second step read from a fragment. The browser's part: test/e2e/oidc-browser.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, oidcSecondStep, type SvcError } from "../../client/src/index.ts";
import { testApp, testConfig } from "../helpers.ts";
import { failure } from "../support/failure.ts";
import { PUBLIC_URL, roundTrip, type TestIdp, testIdp } from "../support/oidc.ts";

const APP_RETURN = "https://app.example.com/signed-in";

let idp: TestIdp;
beforeAll(async () => {
  idp = await testIdp();
});
afterAll(() => idp.stop());

async function oidcApp() {
  const base = testConfig();
  return testApp({
    config: {
      mail: { ...base.mail, publicUrl: PUBLIC_URL },
      oidc: { providers: [idp.settings], returnUrls: [APP_RETURN] },
    },
    oidcProviders: idp.providers,
  });
}

type App = Awaited<ReturnType<typeof oidcApp>>;
const clientOf = (app: App, mode: "json" | "cookie" = "json") =>
  createClient({
    baseUrl: PUBLIC_URL,
    mode,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => app.app.handle(new Request(input, init))) as typeof fetch,
  });

/**
 * A browser sent to `url` (svc's start) holding `cookie` (its svc session): through the provider and back to
 * svc's callback; where it then goes.
 */
async function browse(app: App, url: string, cookie?: string): Promise<URL> {
  const { callback } = await roundTrip(app.call, "test", new URL(url).search, cookie);
  expect(callback?.status).toBe(303);
  return new URL(callback!.headers.get("location")!);
}

describe("@svc/client and OpenID providers", () => {
  test("providers lists the buttons; signInWith answers svc's start address where there is no page", async () => {
    const app = await oidcApp();
    const client = clientOf(app);
    expect(await client.auth.providers()).toEqual([
      { name: "test", label: "Test IdP", url: "/svc-api/v1/auth/oidc/test" },
    ]);
    const start = new URL(client.auth.signInWith("test", { returnTo: APP_RETURN }));
    expect(`${start.origin}${start.pathname}`).toBe(`${PUBLIC_URL}/svc-api/v1/auth/oidc/test`);
    // A json-mode client asks for a code; a cookie-mode one for svc's cookie.
    expect(Object.fromEntries(start.searchParams)).toEqual({ return_to: APP_RETURN, mode: "code" });
    const cookie = new URL(clientOf(app, "cookie").auth.signInWith("test", { invitation: "ABCD" }));
    expect(Object.fromEntries(cookie.searchParams)).toEqual({ mode: "cookie", invitation: "ABCD" });
  });

  test("a mode=code sign-in ends at return_to with a code, which exchangeCode trades once for a session", async () => {
    idp.idp.account = { sub: "code-1", email: "coder@example.test", email_verified: true, preferred_username: "coder" };
    const app = await oidcApp();
    const client = clientOf(app);
    const back = await browse(app, client.auth.signInWith("test", { returnTo: APP_RETURN }));
    expect(`${back.origin}${back.pathname}`).toBe(APP_RETURN);
    const code = back.searchParams.get("code")!;
    const signedIn = await client.auth.exchangeCode(code);
    expect(signedIn).toMatchObject({ mfaRequired: false, mode: "json", user: { username: "coder" } });
    expect((await client.users.me()).username).toBe("coder");
    expect(await failure(clientOf(app).auth.exchangeCode(code))).toMatchObject({
      status: 400,
      code: "invalid_oidc_code",
    });
    expect(await failure(clientOf(app, "cookie").auth.exchangeCode(code))).toBeInstanceOf(TypeError);

    // The identity it made; unlinking it would leave the account no way in.
    const [identity, ...more] = await client.auth.identities();
    expect(more).toEqual([]);
    expect(identity).toMatchObject({ provider: "test", email: "coder@example.test" });
    expect(identity!.last_used_at).not.toBeNull();
    expect(await failure(client.auth.unlinkIdentity("test"))).toMatchObject({
      status: 409,
      code: "last_sign_in_method",
    });
  });

  test("linkIdentity answers svc's address that links the provider; unlinkIdentity removes it", async () => {
    idp.idp.account = { sub: "link-1", email: "someone-else@example.test", email_verified: false };
    const app = await oidcApp();
    await app.signUp("linda");
    const client = clientOf(app);
    await client.auth.login({ username: "linda", password: "correct horse battery" });
    expect(await client.auth.identities()).toEqual([]);
    const url = await client.auth.linkIdentity("test", { returnTo: `${PUBLIC_URL}/svc/admin` });
    expect(new URL(url).searchParams.get("link")).toBeTruthy();
    // Linking goes on only in a browser signed in to svc as linda (her session cookie).
    const inBrowser = await app.call("POST", "/svc-api/v1/auth/login", {
      headers: { origin: PUBLIC_URL },
      body: { username: "linda", password: "correct horse battery", mode: "cookie" },
    });
    const cookie = inBrowser.headers.getSetCookie()[0]!.split(";")[0]!;
    const back = await browse(app, url, cookie);
    expect(back.searchParams.get("linked")).toBe("test");
    expect((await client.auth.identities()).map((each) => each.provider)).toEqual(["test"]);
    await client.auth.unlinkIdentity("test");
    expect(await client.auth.identities()).toEqual([]);
    expect(await failure(client.auth.unlinkIdentity("test"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await failure(client.auth.linkIdentity("nowhere"))).toMatchObject({ status: 404, code: "not_found" });
  });

  test("oidcSecondStep reads the second step from a cookie sign-in's fragment", () => {
    expect(oidcSecondStep("#mfa_token=abc&methods=totp,recovery_code")).toEqual({
      mfaRequired: true,
      mfaToken: "abc",
      methods: ["totp", "recovery_code"],
      expiresIn: 300,
    });
    const webauthn = { challenge: "c2VjcmV0", rpId: "svc.example.com", allowCredentials: [] };
    const encoded = Buffer.from(JSON.stringify(webauthn)).toString("base64url");
    expect(oidcSecondStep(`#mfa_token=abc&methods=webauthn&expires_in=120&webauthn=${encoded}`)).toEqual({
      mfaRequired: true,
      mfaToken: "abc",
      methods: ["webauthn"],
      expiresIn: 120,
      webauthn: webauthn as never,
    });
    // A fragment whose passkey options do not read as JSON offers the other methods only.
    expect(oidcSecondStep("#mfa_token=abc&methods=webauthn,totp&webauthn=!!")?.methods).toEqual(["totp"]);
    expect(oidcSecondStep("#/users")).toBeNull();
    expect(oidcSecondStep("")).toBeNull();
  });
});
