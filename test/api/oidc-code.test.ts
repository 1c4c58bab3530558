// How a sign-in through an OpenID provider ends for an app that cannot use svc's cookie (mode=code): a
// one-time code at the listed return_to, traded once within 60 seconds (by the app's clock) at
// POST auth/oidc/exchange; and for an account with a second factor, the second step in either mode.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { expectProblem } from "../helpers.ts";
import { claims } from "../support/mfa.ts";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.ts";
import { APP_RETURN, OIDC, type OidcApp, oidcApp } from "../support/oidc-app.ts";
import { PUBLIC_URL, type TestIdp, testIdp } from "../support/oidc.ts";

const EXCHANGE = `${OIDC}/exchange`;
const CODE_MODE = `?mode=code&return_to=${encodeURIComponent(APP_RETURN)}`;

let idp: TestIdp;
beforeAll(async () => {
  idp = await testIdp();
});
afterAll(() => idp.stop());

let subjects = 0;
function nextAccount() {
  const n = ++subjects;
  idp.idp.account = { sub: `code-${n}`, email: `code${n}@example.test`, email_verified: true };
  idp.idp.account.preferred_username = `code${n}`;
  return idp.idp.account;
}

/** A mode=code sign-in: the code return_to received. */
async function codeOf(app: OidcApp): Promise<string> {
  const reply = await app.signIn(CODE_MODE);
  expect(reply.status).toBe(303);
  const to = new URL(reply.headers.get("location")!);
  expect(`${to.origin}${to.pathname}`).toBe(APP_RETURN);
  // No cookie session: the app holds the pair it trades the code for.
  expect(app.sessionCookie(reply)).toBeNull();
  return to.searchParams.get("code")!;
}

const disabledBy = (target: string, at: string) => auditEvent("admin.user.updated", { target, origin: CLI_ORIGIN }, at);

const exchange = (app: OidcApp, body: unknown) => app.call("POST", EXCHANGE, { body });

describe("mode=code", () => {
  test("the code is traded once for the usual pair; a second time it is 400 invalid_oidc_code", async () => {
    const account = nextAccount();
    const app = await oidcApp(idp);
    const code = await codeOf(app);
    const traded = await exchange(app, { code });
    expect(traded.status).toBe(200);
    const { token, refresh_token, user } = traded.body;
    expect([typeof token, typeof refresh_token, user.username]).toEqual([
      "string",
      "string",
      account.preferred_username,
    ]);
    const me = await app.call("GET", "/svc-api/v1/users/me", { token });
    expect({ status: me.status, body: me.body }).toMatchObject({ body: { username: account.preferred_username } });
    expectProblem(await exchange(app, { code }), 400, "invalid_oidc_code");
  });

  test("a code is good for 60 seconds by the app's clock", async () => {
    nextAccount();
    const app = await oidcApp(idp);
    const inTime = await codeOf(app);
    app.clock.pass(59_000);
    expect((await exchange(app, { code: inTime })).status).toBe(200);
    const late = await codeOf(app);
    app.clock.pass(60_001);
    expectProblem(await exchange(app, { code: late }), 400, "invalid_oidc_code");
  });

  test("an unknown code is 400 invalid_oidc_code; a malformed body 400 validation_failed", async () => {
    const app = await oidcApp(idp);
    expectProblem(await exchange(app, { code: "never-issued" }), 400, "invalid_oidc_code");
    for (const body of [{}, { code: "" }, { code: 42 }, { code: "x", extra: true }, { code: "x".repeat(257) }])
      expectProblem(await exchange(app, body), 400, "validation_failed");
  });

  test("a code of an account disabled meanwhile: 403 account_disabled", async () => {
    nextAccount();
    const app = await oidcApp(idp);
    const code = await codeOf(app);
    const user = (await app.store.users.findByLogin(idp.idp.account!.preferred_username!))!;
    const at = new Date().toISOString();
    await app.store.users.administer(user.id, { status: "disabled" }, at, disabledBy(user.id, at));
    expectProblem(await exchange(app, { code }), 403, "account_disabled");
  });
});

describe("an account with a second factor", () => {
  async function withFactor() {
    nextAccount();
    const app = await oidcApp(idp);
    const token = await app.tokenOf(await app.signIn());
    const totp = await app.enrolTotp(token);
    return { app, totp };
  }

  test("cookie mode ends at return_to with #mfa_token=…&methods=…; auth/mfa/verify completes it (amr has ext)", async () => {
    const { app, totp } = await withFactor();
    const reply = await app.signIn();
    expect(reply.status).toBe(303);
    expect(app.sessionCookie(reply)).toBeNull();
    const to = new URL(reply.headers.get("location")!);
    expect(`${to.origin}${to.pathname}${to.search}`).toBe(`${PUBLIC_URL}/svc/admin`);
    const fragment = new URLSearchParams(to.hash.slice(1));
    expect(fragment.get("methods")).toBe("totp,recovery_code");
    const done = await app.call("POST", "/svc-api/v1/auth/mfa/verify", {
      headers: { origin: PUBLIC_URL },
      body: { mfa_token: fragment.get("mfa_token"), code: totp.generate({ timestamp: app.clock.now() }) },
    });
    expect({ status: done.status, body: done.body }).toMatchObject({ status: 200 });
    expect(claims(done.body.token).amr).toEqual(["ext", "otp"]);
    const listed = await app.call("GET", "/svc-api/v1/auth/sessions", { token: done.body.token });
    const current = listed.body.find((session: { current: boolean }) => session.current);
    expect(current.amr).toEqual(["ext", "otp"]);
  });

  test("with a passkey its only factor: the fragment carries the passkey options, and the passkey completes it", async () => {
    nextAccount();
    const app = await oidcApp(idp);
    const token = await app.tokenOf(await app.signIn());
    const device = new SoftwareAuthenticator(PUBLIC_URL);
    const options = await app.call("POST", "/svc-api/v1/auth/passkeys/options", { token });
    const added = await app.call("POST", "/svc-api/v1/auth/passkeys", {
      token,
      body: { response: await device.register(options.body) },
    });
    expect(added.status).toBe(201);
    const to = new URL((await app.signIn()).headers.get("location")!);
    const fragment = new URLSearchParams(to.hash.slice(1));
    expect(fragment.get("methods")).toBe("webauthn");
    expect(Number(fragment.get("expires_in"))).toBe(300);
    const webauthn = JSON.parse(Buffer.from(fragment.get("webauthn") ?? "", "base64url").toString() || "null");
    expect(typeof webauthn?.challenge).toBe("string");
    const done = await app.call("POST", "/svc-api/v1/auth/mfa/verify", {
      headers: { origin: PUBLIC_URL },
      body: { mfa_token: fragment.get("mfa_token"), webauthn: await device.assert(webauthn) },
    });
    expect(done.status).toBe(200);
    expect(claims(done.body.token).amr).toEqual(["ext", "hwk"]);
  });

  test("mode=code: the exchange answers mfa_required", async () => {
    const { app } = await withFactor();
    const traded = await exchange(app, { code: await codeOf(app) });
    expect(traded.status).toBe(200);
    const { mfa_required, mfa_token, token } = traded.body;
    expect([mfa_required, typeof mfa_token, token]).toEqual([true, "string", undefined]);
  });
});
