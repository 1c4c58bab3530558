// @svc/client's calls of the mailed links (#55 item 7) against the app in process: a password reset asked for
// and redeemed (json and cookie mode), a change of address waiting for its link and confirmed, and each
// refusal as the SvcError with svc's code, with nothing changed. Tokens are taken from the outbox's mails.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { type Client, createClient, type ErrorCode, SvcError } from "../../client/src/index.ts";
import { blockAfter, testApp } from "../helpers.ts";
import { mailCount, mailedToken, mailOff } from "../support/mail-links.ts";
import { appVerifying, signUpOnly } from "../support/verification.ts";
import { signedIn } from "../support/signed-in.ts";
import { failureOf } from "../support/failure.ts";

const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a new staple battery";
const MALFORMED = "not-a-token";

afterEach(() => setSystemTime());

type App = Awaited<ReturnType<typeof testApp>>;

/** A client whose fetch is the app's handler; in cookie mode, with a cookie jar as a browser on svc's origin. */
function clientOf(app: App, mode: "json" | "cookie" = "json"): Client {
  let cookie: string | null = null;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (cookie !== null) request.headers.set("cookie", `svc_refresh=${cookie}`);
    if (request.method !== "GET") request.headers.set("origin", new URL(request.url).origin);
    const response = await app.app.handle(request);
    for (const line of response.headers.getSetCookie()) {
      const set = Bun.Cookie.parse(line);
      cookie = set.maxAge === 0 ? null : set.value;
    }
    return response;
  }) as typeof globalThis.fetch;
  return createClient({ baseUrl: "http://localhost", fetch, mode });
}

const failure = (promise: Promise<unknown>) => failureOf(promise, SvcError);

/** The account's stored state a refused call must leave as it was. */
async function stateOf(app: App, id: string) {
  const user = (await app.store.users.findById(id))!;
  return { email: user.email, passwordHash: user.passwordHash, tokenVersion: user.tokenVersion };
}

describe("password reset by mail", () => {
  test("requestPasswordReset answers alike for any address; resetPassword signs in and ends other sessions", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann", PASSWORD);
    const client = clientOf(app);
    const known = await client.auth.requestPasswordReset({ email: "ann@example.com" });
    expect(known).toEqual({ status: "requested", message: expect.any(String) });
    expect(await client.auth.requestPasswordReset({ email: "nobody@example.com" })).toEqual(known);
    expect(await mailCount(app.store, "nobody@example.com")).toBe(0);
    const { token } = await mailedToken(app.store, "ann@example.com", "password_reset");

    const session = await client.auth.resetPassword({ token, new_password: NEW_PASSWORD });
    expect(session).toMatchObject({ mode: "json", user: { id: ann.user.id, username: "ann" } });
    expect(client.auth.session?.user.id).toBe(ann.user.id);
    expect((await client.users.me()).id).toBe(ann.user.id);
    // The session ann had before is over; the new password signs in, the old one does not.
    const before = await app.call("GET", "/svc-api/v1/users/me", { token: ann.token });
    expect(before.status).toBe(401);
    const other = clientOf(app);
    expect(signedIn(await other.auth.login({ username: "ann", password: NEW_PASSWORD })).user.id).toBe(ann.user.id);
    const old = await failure(clientOf(app).auth.login({ username: "ann", password: PASSWORD }));
    expect(old).toMatchObject({ status: 401, code: "invalid_credentials" });
    expect(await mailCount(app.store, "ann@example.com", "password_changed")).toBe(1);
    client.close();
    other.close();
  });

  test("cookie mode: resetPassword starts a cookie session that renews through the cookie", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann", PASSWORD);
    const client = clientOf(app, "cookie");
    await client.auth.requestPasswordReset({ email: "ann@example.com" });
    const { token } = await mailedToken(app.store, "ann@example.com", "password_reset");
    const session = await client.auth.resetPassword({ token, new_password: NEW_PASSWORD });
    expect(session).toMatchObject({ mode: "cookie", user: { id: ann.user.id } });
    const renewed = await client.auth.refresh();
    expect(renewed?.user.id).toBe(ann.user.id);
    client.close();
  });

  test("malformed, unknown, used and expired tokens: SvcError with svc's code, no session, nothing changed", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann", PASSWORD);
    const client = clientOf(app);
    const before = await stateOf(app, ann.user.id);
    const refused = async (token: string, status: number, code: ErrorCode) => {
      const error = await failure(client.auth.resetPassword({ token, new_password: NEW_PASSWORD }));
      expect({ status: error.status, code: error.code }).toEqual({ status, code });
      expect(client.auth.session).toBeNull();
      expect(await stateOf(app, ann.user.id)).toEqual(before);
    };
    await refused(MALFORMED, 400, "validation_failed");
    await refused("A".repeat(43), 400, "invalid_mail_token");
    await client.auth.requestPasswordReset({ email: "ann@example.com" });
    const { token } = await mailedToken(app.store, "ann@example.com", "password_reset");
    // Past the link's 30 minutes.
    setSystemTime(new Date(Date.now() + 31 * 60_000));
    await refused(token, 400, "mail_token_expired");
    setSystemTime();
    await client.auth.requestPasswordReset({ email: "ann@example.com" });
    const fresh = (await mailedToken(app.store, "ann@example.com", "password_reset")).token;
    await client.auth.resetPassword({ token: fresh, new_password: NEW_PASSWORD });
    await client.auth.logout();
    const after = await stateOf(app, ann.user.id);
    const used = await failure(client.auth.resetPassword({ token: fresh, new_password: "yet another staple" }));
    expect({ status: used.status, code: used.code }).toEqual({ status: 400, code: "invalid_mail_token" });
    expect(await stateOf(app, ann.user.id)).toEqual(after);
    client.close();
  });

  test("too many requests for one address: too_many_requests with retryAfter; mail off: mail_not_configured", async () => {
    const throttled = await testApp({ config: { loginThrottle: blockAfter(2) } });
    const client = clientOf(throttled);
    for (let i = 0; i < 2; i++) await client.auth.requestPasswordReset({ email: "nobody@example.com" });
    const blocked = await failure(client.auth.requestPasswordReset({ email: "nobody@example.com" }));
    expect(blocked).toMatchObject({ status: 429, code: "too_many_requests" });
    expect(blocked.retryAfter).toBeGreaterThan(0);

    const off = await testApp({ config: mailOff() });
    await off.signUp("ann", PASSWORD);
    const refused = await failure(clientOf(off).auth.requestPasswordReset({ email: "ann@example.com" }));
    expect(refused).toMatchObject({ status: 409, code: "mail_not_configured" });
    expect(await mailCount(off.store, "ann@example.com")).toBe(0);
  });
});

describe("e-mail change by mail", () => {
  test("update answers pending_email; confirmEmailChange makes the change and the session's user follows", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann", PASSWORD);
    const client = clientOf(app);
    await client.auth.login({ username: "ann", password: PASSWORD });
    const pending = await client.users.update({ email: "ann@example.org", current_password: PASSWORD });
    expect(pending).toMatchObject({ id: ann.user.id, email: "ann@example.com", pending_email: "ann@example.org" });
    expect(client.auth.session?.user.email).toBe("ann@example.com");
    // A change without a new address answers the record alone.
    expect("pending_email" in (await client.users.update({ username: "anne" }))).toBe(false);
    const { token } = await mailedToken(app.store, "ann@example.org", "email_change");
    const me = await client.users.confirmEmailChange({ token });
    expect(me).toMatchObject({ id: ann.user.id, email: "ann@example.org", email_verified: true });
    expect(client.auth.session?.user).toMatchObject({ email: "ann@example.org", email_verified: true });
    expect(await mailCount(app.store, "ann@example.com", "email_changed")).toBe(1);
    client.close();
  });

  test("an address taken meanwhile, and malformed, unknown and used tokens: SvcError, nothing changed", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann", PASSWORD);
    const client = clientOf(app);
    await client.auth.login({ username: "ann", password: PASSWORD });
    await client.users.update({ email: "new@example.com", current_password: PASSWORD });
    const { token } = await mailedToken(app.store, "new@example.com", "email_change");
    await client.users.create({ username: "newcomer", email: "new@example.com", password: PASSWORD });
    const before = await stateOf(app, ann.user.id);
    const refused = async (input: string, status: number, code: ErrorCode) => {
      const error = await failure(client.users.confirmEmailChange({ token: input }));
      expect({ status: error.status, code: error.code }).toEqual({ status, code });
      expect(await stateOf(app, ann.user.id)).toEqual(before);
      expect(client.auth.session?.user.email).toBe("ann@example.com");
    };
    await refused(token, 409, "email_taken");
    await refused(MALFORMED, 400, "validation_failed");
    await refused("A".repeat(43), 400, "invalid_mail_token");
    await client.users.update({ email: "ann@example.org", current_password: PASSWORD });
    const second = (await mailedToken(app.store, "ann@example.org", "email_change")).token;
    await client.users.confirmEmailChange({ token: second });
    const after = await stateOf(app, ann.user.id);
    const used = await failure(client.users.confirmEmailChange({ token: second }));
    expect({ status: used.status, code: used.code }).toEqual({ status: 400, code: "invalid_mail_token" });
    expect(await stateOf(app, ann.user.id)).toEqual(after);
    client.close();
  });
});

describe("e-mail verification", () => {
  test("verifyEmail({ token }) answers the user; resendVerification({}) asks as the signed-in account", async () => {
    const app = await testApp();
    const client = clientOf(app);
    await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
    await client.auth.login({ username: "ann", password: PASSWORD });
    expect(await client.auth.resendVerification({})).toEqual({ detail: expect.any(String) });
    const { token } = await mailedToken(app.store, "ann@example.com", "verify_email");
    const me = await client.auth.verifyEmail({ token });
    expect(me).toMatchObject({ username: "ann", email_verified: true, email_verified_at: expect.any(String) });
    expect(client.auth.session?.user.email_verified).toBe(true);
    client.close();
  });

  test("while verification is required, an unverified account's login is email_unverified, with no session", async () => {
    const app = await appVerifying("required");
    await signUpOnly(app, "ann");
    const client = clientOf(app);
    const refused = await failure(client.auth.login({ username: "ann", password: PASSWORD }));
    expect(refused).toMatchObject({ status: 403, code: "email_unverified" });
    expect(client.auth.session).toBeNull();
    const { token } = await mailedToken(app.store, "ann@example.com", "verify_email");
    expect((await client.auth.verifyEmail({ token })).email_verified).toBe(true);
    expect(signedIn(await client.auth.login({ username: "ann", password: PASSWORD })).user.email_verified).toBe(true);
    client.close();
  });
});
