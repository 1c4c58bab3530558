// SVC_EMAIL_VERIFICATION=required: an unverified account's right password (or reset code) gets 403
// email_unverified and nothing else, a wrong one the ordinary refusal; a new link by address alone, with
// one answer for every address; and administrators marking an address verified.
import { describe, expect, test } from "bun:test";
import { expectProblem, promote } from "../helpers.ts";
import {
  appVerifying,
  mailedToken,
  PASSWORD,
  RESEND,
  signUpOnly,
  VERIFY,
  verificationMails,
  verifiedUser,
} from "../support/verification.ts";

const LOGIN = "/svc-api/v1/auth/login";
const ADMIN = "/svc-api/v1/admin";

describe("with verification required", () => {
  test("an unverified account's right password: 403 email_unverified, no tokens, no session, no login stamped", async () => {
    const app = await appVerifying("required");
    const ann = await signUpOnly(app, "ann");
    const before = await app.store.users.findById(ann.id);
    const refused = await app.call("POST", LOGIN, { body: { username: "ann", password: PASSWORD } });
    expectProblem(refused, 403, "email_unverified");
    expect(refused.text).not.toContain("token");
    expect(refused.headers.get("set-cookie")).toBeNull();
    const cookie = await app.call("POST", LOGIN, {
      body: { username: "ann", password: PASSWORD, mode: "cookie" },
      headers: { origin: "http://localhost" },
    });
    expectProblem(cookie, 403, "email_unverified");
    expect(cookie.headers.get("set-cookie")).toBeNull();
    // A wrong password learns nothing: the ordinary 401.
    expectProblem(
      await app.call("POST", LOGIN, { body: { username: "ann", password: "not the password" } }),
      401,
      "invalid_credentials",
    );
    expect(await app.store.users.findById(ann.id)).toEqual(before);
    expect(await app.store.sessions.list(ann.id, new Date().toISOString())).toEqual([]);
    const failed = await app.store.audit.list({ action: "login.failed", targetId: ann.id, limit: 10 });
    expect(failed.map((e) => JSON.parse(e.detail!).reason)).toEqual([
      "wrong_password",
      "email_unverified",
      "email_unverified",
    ]);

    await app.call("POST", VERIFY, { body: { token: await mailedToken(app.store, ann.email) } });
    expect((await app.call("POST", LOGIN, { body: { username: "ann", password: PASSWORD } })).status).toBe(200);
  });

  test("a reset code of an unverified account: right, 403 and the code stays; wrong, 400 invalid_reset_code", async () => {
    const app = await appVerifying("required");
    const root = await verifiedUser(app, "root");
    await promote(app.store, root.user.id);
    const ann = await signUpOnly(app, "ann");
    const issued = await app.call("POST", `${ADMIN}/users/${ann.id}/password-reset`, { token: root.token });
    expect(issued.status).toBe(201);
    const redeem = (code: string) =>
      app.call("POST", "/svc-api/v1/auth/password-reset", {
        body: { username: "ann", reset_code: code, new_password: "a brand new secret" },
      });
    const before = await app.store.users.findById(ann.id);
    expectProblem(await redeem("0000-0000-0000-0000-0000-0000-0000-0000"), 400, "invalid_reset_code");
    const refused = await redeem(issued.body.reset_code);
    expectProblem(refused, 403, "email_unverified");
    expect(refused.text).not.toContain("token");
    expect(await app.store.users.findById(ann.id)).toEqual(before);
    expect(await app.store.sessions.list(ann.id, new Date().toISOString())).toEqual([]);

    await app.call("POST", VERIFY, { body: { token: await mailedToken(app.store, ann.email) } });
    expect((await redeem(issued.body.reset_code)).status).toBe(200);
  });

  test("a new link by address alone: 202 with one body for unknown, unverified, verified and throttled alike", async () => {
    const app = await appVerifying("required");
    await signUpOnly(app, "ann");
    await verifiedUser(app, "bob");
    const ask = (email: string) => app.call("POST", RESEND, { body: { email } });
    const answers = [
      await ask("nobody@example.com"),
      await ask("ANN@example.com"),
      await ask("bob@example.com"),
      await ask("ann@example.com"),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(202);
      expect(answer.text).toBe(answers[0]!.text);
    }
    // Ann's sign-up mail, and one resend: the second within the minute was held back, silently.
    expect(await verificationMails(app.store, "ann@example.com")).toHaveLength(2);
    expect(await verificationMails(app.store, "bob@example.com")).toHaveLength(1);
    expect(await app.store.mail.list({ recipient: "nobody@example.com", limit: 10 })).toEqual([]);
    const token = await mailedToken(app.store, "ann@example.com");
    expect((await app.call("POST", VERIFY, { body: { token } })).status).toBe(200);
  });

  test("a resend by address: a missing or malformed address, or another field, is 400 validation_failed", async () => {
    const app = await appVerifying("required");
    await signUpOnly(app, "ann");
    for (const body of [{}, { email: "not an address" }, { email: 7 }, { email: "ann@example.com", more: 1 }, [1]])
      expectProblem(await app.call("POST", RESEND, { body }), 400, "validation_failed");
    expectProblem(await app.call("POST", RESEND), 400, "validation_failed");
    expect(await verificationMails(app.store, "ann@example.com")).toHaveLength(1);
  });
});

describe("administrators mark an address verified", () => {
  test("POST admin/users/{id}/email-verified: the account verified, its links spent, recorded with its actor", async () => {
    const app = await appVerifying("required");
    const root = await verifiedUser(app, "root");
    await promote(app.store, root.user.id);
    const ann = await signUpOnly(app, "ann");
    const token = await mailedToken(app.store, ann.email);
    const mark = (id: string, bearer = root.token) =>
      app.call("POST", `${ADMIN}/users/${id}/email-verified`, { token: bearer });
    const marked = await mark(ann.id);
    expect(marked.status).toBe(200);
    const { id, email_verified, email_verified_at } = marked.body;
    expect({ id, email_verified, at: typeof email_verified_at }).toEqual({
      id: ann.id,
      email_verified: true,
      at: "string",
    });
    expect((await app.call("GET", `${ADMIN}/users/${ann.id}`, { token: root.token })).body).toEqual(marked.body);
    expectProblem(await app.call("POST", VERIFY, { body: { token } }), 400, "invalid_mail_token");
    expect((await app.call("POST", LOGIN, { body: { username: "ann", password: PASSWORD } })).status).toBe(200);
    // Again: as it was, and recorded once.
    expect((await mark(ann.id)).body).toMatchObject({ email_verified_at, updated_at: marked.body.updated_at });
    const events = await app.store.audit.list({ action: "email_verification.marked", limit: 10 });
    expect(events.map((e) => [e.actorId, e.targetId])).toEqual([[root.user.id, ann.id]]);

    expectProblem(await mark(Bun.randomUUIDv7()), 404, "not_found");
    expectProblem(await mark("not-an-id"), 404, "not_found");
    const bob = await verifiedUser(app, "bob");
    expectProblem(await mark(ann.id, bob.token), 403, "forbidden");
  });

  test("an administrator's new account gets the mail, unless the administrator vouches for the address", async () => {
    const app = await appVerifying("optional");
    const root = await app.signUp("root");
    await promote(app.store, root.user.id);
    const make = (username: string, extra: object = {}) =>
      app.call("POST", `${ADMIN}/users`, {
        token: root.token,
        body: { username, email: `${username}@example.com`, password: PASSWORD, ...extra },
      });
    const plain = await make("ann");
    expect(plain.body).toMatchObject({ email_verified: false, email_verified_at: null });
    expect(await verificationMails(app.store, "ann@example.com")).toHaveLength(1);
    const sent = await app.store.audit.list({ action: "email_verification.sent", targetId: plain.body.id, limit: 10 });
    expect(sent.map((e) => e.actorId)).toEqual([root.user.id]);
    const vouched = await make("bob", { email_verified: true });
    expect(vouched.body).toMatchObject({ email_verified: true, email_verified_at: vouched.body.created_at });
    expect(await verificationMails(app.store, "bob@example.com")).toEqual([]);
    expectProblem(await make("cy", { email_verified: "yes" }), 400, "validation_failed");
  });
});
