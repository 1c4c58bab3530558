// Password reset by mail (#55): a link asked for by address, its token redeemed at auth/password-reset.
// Every mail is read from the outbox, as the sender would deliver it; the token is taken from its link.
import { describe, expect, test } from "bun:test";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import type { Store } from "../../src/db/store.ts";
import { linkTokenDigest, newLinkToken } from "../../src/users/link-tokens.ts";
import { blockAfter, expectProblem, testApp } from "../helpers.ts";
import { recordingStore } from "../support/recording-store.ts";
import { mailCount, mailedToken, mailOff } from "../support/mail-links.ts";

const REQUEST = "/svc-api/v1/auth/password-reset/request";
const REDEEM = "/svc-api/v1/auth/password-reset";
const NEW_PASSWORD = "a new staple battery";

async function resetApp(config: Parameters<typeof testApp>[0] = {}) {
  const app = await testApp(config);
  const ann = await app.signUp("ann");
  const request = (email: string) => app.call("POST", REQUEST, { body: { email } });
  const redeem = (body: object) => app.call("POST", REDEEM, { body });
  /** Asks for a link for ann and takes its token from the mail. */
  const link = async () => {
    expect((await request("ann@example.com")).status).toBe(202);
    return mailedToken(app.store, "ann@example.com", "password_reset");
  };
  const state = async () => {
    const user = (await app.store.users.findById(ann.user.id))!;
    return { passwordHash: user.passwordHash, tokenVersion: user.tokenVersion, email: user.email };
  };
  return { ...app, ann, request, redeem, link, state };
}

const disable = (store: Store, id: string) =>
  store.users.administer(
    id,
    { status: "disabled" },
    new Date().toISOString(),
    auditEvent("admin.user.updated", { target: id, origin: CLI_ORIGIN }),
  );

describe("password reset by mail", () => {
  test("the link's token sets the password, ends every session, mails a notice and verifies the address", async () => {
    const { call, store, ann, redeem, link } = await resetApp();
    const { mail, link: url, token } = await link();
    expect(mail).toMatchObject({ kind: "password_reset", recipient: "ann@example.com", userId: ann.user.id });
    expect(url).toStartWith("http://localhost:8080/svc/account/reset-password#token=");
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const reply = await redeem({ token, new_password: NEW_PASSWORD });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ token_type: "Bearer", user: { id: ann.user.id, email: "ann@example.com" } });
    // Every earlier session ended: its access token and its refresh token stop working.
    expectProblem(await call("GET", "/svc-api/v1/users/me", { token: ann.token }), 401, "unauthorized");
    expect((await call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: ann.refresh } })).status).toBe(401);
    expect((await call("GET", "/svc-api/v1/users/me", { token: reply.body.token })).status).toBe(200);
    const login = (password: string) => call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password } });
    expect((await login(NEW_PASSWORD)).status).toBe(200);
    expectProblem(await login(ann.password), 401, "invalid_credentials");
    expect(await mailCount(store, "ann@example.com", "password_changed")).toBe(1);
    expect((await store.users.findById(ann.user.id))!.emailVerifiedAt).not.toBeNull();
    const [redeemed] = await store.audit.list({ action: "password_reset.redeemed", limit: 5 });
    expect(redeemed).toMatchObject({ actorId: ann.user.id, targetId: ann.user.id });
    expect(JSON.parse(redeemed!.detail!)).toMatchObject({ via: "mail" });
    const [requested] = await store.audit.list({ action: "password_reset.requested", limit: 5 });
    expect(requested).toMatchObject({ targetId: ann.user.id });
  });

  test("a newer link replaces the earlier: the first token is then 400 invalid_mail_token", async () => {
    const { redeem, link, state } = await resetApp();
    const first = await link();
    const second = await link();
    const before = await state();
    expectProblem(await redeem({ token: first.token, new_password: NEW_PASSWORD }), 400, "invalid_mail_token");
    expect(await state()).toEqual(before);
    expect((await redeem({ token: second.token, new_password: NEW_PASSWORD })).status).toBe(200);
  });

  test("unknown, used, other-kind and expired tokens: 400 with their code, and nothing changes", async () => {
    const { store, ann, call, redeem, link, state } = await resetApp();
    const before = await state();
    const refused = async (token: string, code: string) => {
      expectProblem(await redeem({ token, new_password: NEW_PASSWORD }), 400, code);
      expect(await state()).toEqual(before);
      expect(await mailCount(store, "ann@example.com", "password_changed")).toBe(0);
    };
    await refused(newLinkToken(), "invalid_mail_token");
    // An e-mail change's token is not a reset's.
    const change = await call("PUT", "/svc-api/v1/users", {
      token: ann.token,
      body: { email: "ann@example.org", current_password: ann.password },
    });
    expect(change.status).toBe(202);
    await refused((await mailedToken(store, "ann@example.org", "email_change")).token, "invalid_mail_token");
    // Expired: a token whose 30 minutes are over, as the store holds it.
    const old = newLinkToken();
    const at = new Date(Date.now() - 31 * 60_000).toISOString();
    const event = auditEvent("password_reset.requested", { target: ann.user.id, origin: CLI_ORIGIN }, at);
    const record = { digest: linkTokenDigest(old), kind: "password_reset" as const, userId: ann.user.id };
    const expiresAt = new Date(Date.now() - 60_000).toISOString();
    const sent = (await store.mail.list({ recipient: "ann@example.org", limit: 1 }))[0]!;
    const id = Bun.randomUUIDv7();
    const notice = { ...sent, id, messageId: `<${id}@localhost>` };
    expect(
      await store.mailedResets.request(
        { ...record, email: ann.user.email, createdAt: at, expiresAt },
        notice,
        event,
        true,
      ),
    ).toBe(true);
    await refused(old, "mail_token_expired");
    // Used: the second redemption of a token finds it spent.
    const { token } = await link();
    expect((await redeem({ token, new_password: NEW_PASSWORD })).status).toBe(200);
    const after = await state();
    expectProblem(await redeem({ token, new_password: "yet another staple" }), 400, "invalid_mail_token");
    expect(await state()).toEqual(after);
  });

  test("a link mailed to the old address stops working once a change of address is confirmed: 400, nothing changed", async () => {
    const { store, ann, call, redeem, link, state } = await resetApp();
    const { token } = await link();
    const change = await call("PUT", "/svc-api/v1/users", {
      token: ann.token,
      body: { email: "ann@example.org", current_password: ann.password },
    });
    expect(change.status).toBe(202);
    const confirm = (await mailedToken(store, "ann@example.org", "email_change")).token;
    expect((await call("POST", "/svc-api/v1/auth/email/confirm-change", { body: { token: confirm } })).status).toBe(
      200,
    );
    const before = await state();
    expect(before.email).toBe("ann@example.org");
    expectProblem(await redeem({ token, new_password: NEW_PASSWORD }), 400, "invalid_mail_token");
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "ann@example.org", "password_changed")).toBe(0);
    expect(await mailCount(store, "ann@example.com", "password_changed")).toBe(0);
  });

  test("bad bodies: 400 validation_failed naming the field, and the token still works", async () => {
    const { redeem, link, state, request } = await resetApp();
    const { token } = await link();
    const before = await state();
    const fields = async (body: object, expected: string[]) => {
      const reply = await redeem(body);
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(expected);
      expect(await state()).toEqual(before);
    };
    await fields({ token: "not-a-token", new_password: NEW_PASSWORD }, ["token"]);
    await fields({ token: `${token}x`, new_password: NEW_PASSWORD }, ["token"]);
    await fields({ token, new_password: "password" }, ["new_password"]);
    await fields({ token, new_password: "short" }, ["new_password"]);
    await fields({ token, username: "ann", new_password: NEW_PASSWORD }, ["username"]);
    await fields({ new_password: NEW_PASSWORD }, ["username", "reset_code"]);
    const badRequest = await request("not an address");
    expectProblem(badRequest, 400, "validation_failed");
    expect(badRequest.body.errors.map((e: { field: string }) => e.field)).toEqual(["email"]);
    expect((await redeem({ token, new_password: NEW_PASSWORD })).status).toBe(200);
  });

  test("a disabled account's token: 403 account_disabled, and nothing changes", async () => {
    const { store, ann, redeem, link, state } = await resetApp();
    const { token } = await link();
    await disable(store, ann.user.id);
    const before = await state();
    expectProblem(await redeem({ token, new_password: NEW_PASSWORD }), 403, "account_disabled");
    expect(await state()).toEqual(before);
  });

  test("six redemptions of one token at once: one 200, five 400 invalid_mail_token; one notice", async () => {
    const { store, redeem, link } = await resetApp();
    const { token } = await link();
    const replies = await Promise.all(Array.from({ length: 6 }, () => redeem({ token, new_password: NEW_PASSWORD })));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    for (const reply of replies.filter((r) => r.status === 400)) expect(reply.body.code).toBe("invalid_mail_token");
    expect(await mailCount(store, "ann@example.com", "password_changed")).toBe(1);
  });

  test("wrong tokens are throttled per client as reset codes are: 429 with Retry-After", async () => {
    const { redeem } = await resetApp({ config: { loginThrottle: { ...blockAfter(5), clientMaxFailures: 3 } } });
    for (let i = 0; i < 3; i++)
      expectProblem(await redeem({ token: newLinkToken(), new_password: NEW_PASSWORD }), 400, "invalid_mail_token");
    const blocked = await redeem({ token: newLinkToken(), new_password: NEW_PASSWORD });
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("with mail off: 409 mail_not_configured, and nothing is written", async () => {
    const { request, store } = await resetApp({ config: mailOff() });
    expectProblem(await request("ann@example.com"), 409, "mail_not_configured");
    expect(await mailCount(store, "ann@example.com")).toBe(0);
    expect(await store.audit.list({ action: "password_reset.requested", limit: 5 })).toEqual([]);
  });
});

describe("no account enumeration through reset requests", () => {
  test("known, unknown and disabled addresses: the same status, body and headers, from the same store calls", async () => {
    const calls: string[] = [];
    const { request, store, signUp } = await resetApp({
      store: recordingStore(calls, ["users", "throttle", "mailedResets"]),
    });
    const bob = await signUp("bob");
    await disable(store, bob.user.id);
    const asked = async (email: string) => {
      calls.length = 0;
      const reply = await request(email);
      const headers = [...reply.headers].filter(([name]) => name !== "x-request-id");
      return { status: reply.status, text: reply.text, headers, calls: [...calls] };
    };
    const known = await asked("ann@example.com");
    expect(known.status).toBe(202);
    expect(await asked("nobody@example.com")).toEqual(known);
    expect(await asked("bob@example.com")).toEqual(known);
    expect(await mailCount(store, "nobody@example.com")).toBe(0);
    expect(await mailCount(store, "bob@example.com", "password_reset")).toBe(0);
  });

  test("throttled per address: the same 429 and Retry-After for known and unknown addresses", async () => {
    const { request } = await resetApp({ config: { loginThrottle: blockAfter(3) } });
    const blocked = async (email: string) => {
      for (let i = 0; i < 3; i++) expect((await request(email)).status).toBe(202);
      const reply = await request(email);
      expectProblem(reply, 429, "too_many_requests");
      return { status: reply.status, retryAfter: reply.headers.get("retry-after"), code: reply.body.code };
    };
    const known = await blocked("ann@example.com");
    expect(Number(known.retryAfter)).toBeGreaterThan(0);
    expect(await blocked("nobody@example.com")).toEqual(known);
  });

  test("throttled per client: 429 with Retry-After once a client has asked for many addresses", async () => {
    const { request } = await resetApp({ config: { loginThrottle: { ...blockAfter(5), clientMaxFailures: 4 } } });
    for (let i = 0; i < 4; i++) expect((await request(`someone${i}@example.com`)).status).toBe(202);
    const reply = await request("ann@example.com");
    expectProblem(reply, 429, "too_many_requests");
    expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
