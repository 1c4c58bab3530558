// E-mail verification through the API, read back from the outbox as the recipient would: the mail a
// sign-up is owed, its link redeemed, every refusal (and that it changes nothing), resends and their limit.
import { describe, expect, test } from "bun:test";
import { CLI_ORIGIN, auditEvent } from "../../src/audit/model.ts";
import { createEmailVerifier } from "../../src/auth/email-verifier.ts";
import { linkTokenDigest as mailTokenDigest, newLinkToken as newMailToken } from "../../src/users/link-tokens.ts";
import { AppError } from "../../src/errors/index.ts";
import { expectProblem, testApp, testConfig } from "../helpers.ts";
import { outboxMail } from "../store/conformance/email-verifications.ts";
import {
  appVerifying,
  mailedToken,
  PASSWORD,
  RESEND,
  signUpOnly,
  VERIFY,
  verificationMails,
} from "../support/verification.ts";

const ME = "/svc-api/v1/users/me";

describe("verifying an address by its mailed link", () => {
  test("sign-up mails a link; redeeming it verifies the account, and cached pages show it at once", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    expect(ann.user).toMatchObject({ email_verified: false, email_verified_at: null });
    const [mail] = await verificationMails(app.store, "ann@example.com");
    expect(mail).toMatchObject({ userId: ann.user.id, status: "pending", subject: expect.stringContaining("Confirm") });
    expect(mail!.textBody).toContain(`${app.config.mail.publicUrl}/svc/account/verify-email#token=`);
    // The users page, read (and kept) before: a verification bumps the table's version, so it is read again.
    const before = await app.call("GET", "/svc-api/v1/users/all", { token: ann.token });
    expect(before.body[0]).toMatchObject({ id: ann.user.id, email_verified: false });

    const verified = await app.call("POST", VERIFY, { body: { token: await mailedToken(app.store, ann.user.email) } });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({
      ...ann.user,
      email_verified: true,
      email_verified_at: expect.stringMatching(/^\d{4}-.*Z$/),
      updated_at: verified.body.email_verified_at,
    });
    expect((await app.call("GET", ME, { token: ann.token })).body).toEqual(verified.body);
    const after = await app.call("GET", "/svc-api/v1/users/all", { token: ann.token });
    expect(after.body[0]).toMatchObject({ id: ann.user.id, email_verified: true });
    const events = await app.store.audit.list({ targetId: ann.user.id, limit: 10 });
    expect(events.map((e) => e.action).reverse()).toEqual([
      "user.created",
      "email_verification.sent",
      "login.succeeded",
      "email_verification.redeemed",
    ]);
    expect(JSON.stringify(events)).not.toContain(await mailedToken(app.store, ann.user.email));
  });

  test("unknown, used, replaced, expired, missing and malformed tokens: exact refusals, nothing changed", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    const first = await mailedToken(app.store, ann.user.email);
    expect((await app.call("POST", RESEND, { token: ann.token })).status).toBe(202);
    const second = await mailedToken(app.store, ann.user.email);
    expect(second).not.toBe(first);
    // One that expired: issued by the store with its expiry passed.
    const expired = newMailToken();
    const bob = await app.signUp("bob");
    await app.store.emailVerifications.issue({
      token: {
        digest: mailTokenDigest(expired),
        userId: bob.user.id,
        email: bob.user.email,
        createdAt: new Date(Date.now() - 25 * 3600_000).toISOString(),
        expiresAt: new Date(Date.now() - 3600_000).toISOString(),
      },
      mail: outboxMail(bob.user.email, bob.user.id),
      audit: auditEvent("email_verification.sent", { target: bob.user.id, origin: CLI_ORIGIN }),
    });
    const state = async () => [
      await app.store.users.findById(ann.user.id),
      await app.store.users.findById(bob.user.id),
    ];
    const unchanged = await state();
    const verify = (body: unknown) => app.call("POST", VERIFY, { body });

    expectProblem(await verify({ token: newMailToken() }), 400, "invalid_mail_token");
    expectProblem(await verify({ token: first }), 400, "invalid_mail_token");
    expectProblem(await verify({ token: expired }), 400, "mail_token_expired");
    expectProblem(await verify({}), 400, "validation_failed");
    expectProblem(await verify({ token: "short" }), 400, "validation_failed");
    expectProblem(await verify({ token: `${second.slice(0, 42)}!` }), 400, "validation_failed");
    expectProblem(await verify({ token: 42 }), 400, "validation_failed");
    expectProblem(await verify({ token: second, extra: 1 }), 400, "validation_failed");
    expectProblem(
      await app.call("POST", VERIFY, { raw: "{", headers: { "content-type": "application/json" } }),
      400,
      "malformed_json",
    );
    expectProblem(
      await app.call("POST", VERIFY, { raw: second, headers: { "content-type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    expect(await state()).toEqual(unchanged);
    expect(await app.store.audit.list({ action: "email_verification.redeemed", limit: 10 })).toEqual([]);

    // The newest works once; used, it is refused like any other.
    expect((await verify({ token: second })).status).toBe(200);
    expectProblem(await verify({ token: second }), 400, "invalid_mail_token");
  });

  test("a link for an address the account no longer has is refused", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    const token = await mailedToken(app.store, ann.user.email);
    // Changed by the store: how the API changes an address is the e-mail change's own flow.
    expect(
      await app.store.users.update(ann.user.id, { email: "ann.new@example.com" }, new Date().toISOString()),
    ).not.toBeNull();
    const user = await app.store.users.findById(ann.user.id);
    expectProblem(await app.call("POST", VERIFY, { body: { token } }), 400, "invalid_mail_token");
    expect(await app.store.users.findById(ann.user.id)).toEqual(user);
  });
});

describe("asking for a new link", () => {
  test("by Bearer token: 202, a new mail whose link replaces the last; at most one a minute (429, Retry-After)", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    const resent = await app.call("POST", RESEND, { token: ann.token });
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual({ detail: expect.any(String) });
    expect(await verificationMails(app.store, ann.user.email)).toHaveLength(2);
    const again = await app.call("POST", RESEND, { token: ann.token });
    expectProblem(again, 429, "too_many_requests");
    const wait = Number(again.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await verificationMails(app.store, ann.user.email)).toHaveLength(2);
    const sent = await app.store.audit.list({ action: "email_verification.sent", targetId: ann.user.id, limit: 10 });
    expect(sent).toHaveLength(2);
  });

  test("an address verified already: a no-op 202, and no mail", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    await app.call("POST", VERIFY, { body: { token: await mailedToken(app.store, ann.user.email) } });
    const reply = await app.call("POST", RESEND, { token: ann.token });
    expect(reply.status).toBe(202);
    expect(await verificationMails(app.store, ann.user.email)).toHaveLength(1);
  });

  test("without a token while verification is optional: 401; a body with a token: 400", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    expectProblem(await app.call("POST", RESEND, { body: { email: "ann@example.com" } }), 401, "unauthorized");
    expectProblem(await app.call("POST", RESEND), 401, "unauthorized");
    expectProblem(
      await app.call("POST", RESEND, { token: ann.token, body: { email: "ann@example.com" } }),
      400,
      "validation_failed",
    );
    expect(await verificationMails(app.store, ann.user.email)).toHaveLength(1);
  });

  test("mail off: sign-up sends nothing, the account is unverified, and a resend is 409 mail_not_configured", async () => {
    const app = await testApp({
      config: { mail: { ...testConfig().mail, transport: { kind: "off" }, verification: "off" } },
    });
    const ann = await app.signUp("ann");
    expect(ann.user).toMatchObject({ email_verified: false });
    expect(await app.store.mail.list({ limit: 10 })).toEqual([]);
    expectProblem(await app.call("POST", RESEND, { token: ann.token }), 409, "mail_not_configured");
  });

  test("verification off with mail on: sign-up sends nothing; a resend is 409 email_verification_off, nothing sent", async () => {
    const app = await appVerifying("off");
    await signUpOnly(app, "ann");
    expect(await app.store.mail.list({ limit: 10 })).toEqual([]);
    const login = await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: PASSWORD } });
    expect(login.status).toBe(200);
    for (const options of [{ token: login.body.token }, { body: { email: "ann@example.com" } }, {}]) {
      const reply = await app.call("POST", RESEND, options);
      expectProblem(reply, 409, "email_verification_off");
      expect(reply.body.detail).toContain("SVC_EMAIL_VERIFICATION=off");
    }
    expect(await app.store.mail.list({ limit: 10 })).toEqual([]);
    expect(await app.store.audit.list({ action: "email_verification.sent", limit: 10 })).toEqual([]);
  });
});

/** The app's own verifier, on a clock the test moves. */
const verifierOf = (app: Awaited<ReturnType<typeof testApp>>, now: () => number) =>
  createEmailVerifier({
    mail: app.config.mail,
    secret: app.config.jwt.secret,
    users: app.store.users,
    verifications: app.store.emailVerifications,
    outbox: app.store.mail,
    throttle: app.store.throttle,
    now,
  });

describe("the resend limits over an hour", () => {
  test("five an hour per account, whatever the minutes between; then 429 until the hour is up", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    const caller = (await app.store.users.findById(ann.user.id))!;
    let now = Date.now();
    const verifier = verifierOf(app, () => now);
    const origin = { address: "192.0.2.1", requestId: null };
    for (let i = 0; i < 5; i++) {
      await verifier.resend(caller, origin);
      now += 61_000;
    }
    const refused = await verifier.resend(caller, origin).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe("too_many_requests");
    expect(Number((refused as AppError).headers?.["retry-after"])).toBe(3600 - 5 * 61);
    expect(await verificationMails(app.store, ann.user.email)).toHaveLength(6);
    now += (3600 - 5 * 61) * 1000;
    await verifier.resend(caller, origin);
    expect(await verificationMails(app.store, ann.user.email)).toHaveLength(7);
  });

  test("by address: twenty an hour from one client, whichever addresses; the rest held back silently", async () => {
    const app = await appVerifying("required");
    const now = Date.now();
    const verifier = verifierOf(app, () => now);
    for (let i = 0; i < 21; i++) await signUpOnly(app, `user${i}`);
    for (let i = 0; i < 21; i++)
      await verifier.resendTo(`user${i}@example.com`, { address: "192.0.2.1", requestId: null });
    const mailed = await Promise.all(
      Array.from({ length: 21 }, async (_, i) => (await verificationMails(app.store, `user${i}@example.com`)).length),
    );
    expect(mailed).toEqual([...Array(20).fill(2), 1]);
    // Another client is counted apart.
    await verifier.resendTo("user20@example.com", { address: "198.51.100.7", requestId: null });
    expect(await verificationMails(app.store, "user20@example.com")).toHaveLength(2);
  });
});

describe("sign-up by invitation", () => {
  test("the account, the invitation spent and the mail come in one change; a refused code mails nothing", async () => {
    const app = await testApp({ config: { signup: { mode: "invite" } } });
    // An administrator made as on the box: verified, so that nothing it does is owed a mail.
    await app.store.users.create({
      id: Bun.randomUUIDv7(),
      username: "root",
      email: "root@example.com",
      passwordHash: await Bun.password.hash(PASSWORD),
      createdAt: new Date().toISOString(),
      role: "admin",
      emailVerifiedAt: new Date().toISOString(),
    });
    const login = await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "root", password: PASSWORD } });
    const issued = await app.call("POST", "/svc-api/v1/admin/invitations", { token: login.body.token, body: {} });
    expect(issued.status).toBe(201);
    const signUp = (username: string, invitation: string) =>
      app.call("POST", "/svc-api/v1/users/create", {
        body: { username, email: `${username}@example.com`, password: PASSWORD, invitation },
      });
    expectProblem(await signUp("eve", "0000-0000-0000-0000"), 403, "invalid_invitation");
    expect(await app.store.mail.list({ limit: 10 })).toEqual([]);
    const dee = await signUp("dee", issued.body.code);
    expect(dee.status).toBe(201);
    const verified = await app.call("POST", VERIFY, {
      body: { token: await mailedToken(app.store, "dee@example.com") },
    });
    expect(verified.body).toMatchObject({ id: dee.body.id, email_verified: true });
  });
});
