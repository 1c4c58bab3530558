// Changing one's address while svc sends mail (#55): PUT users answers 202 and mails a link to the new
// address; auth/email/confirm-change makes the change and tells the old address. Without mail the change
// is made at once (users.test.ts holds that behaviour; one check here too).
import { describe, expect, test } from "bun:test";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { linkTokenDigest, newLinkToken } from "../../src/users/link-tokens.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { expectProblem, testApp, testConfig } from "../helpers.ts";
import { mailCount, mailedToken, mailOff } from "../support/mail-links.ts";

const USERS = "/svc-api/v1/users";
const CONFIRM = "/svc-api/v1/auth/email/confirm-change";

async function changeApp(config: Parameters<typeof testApp>[0] = {}) {
  const app = await testApp(config);
  const ann = await app.signUp("ann");
  const change = (body: object, headers: Record<string, string> = {}) =>
    app.call("PUT", USERS, { token: ann.token, body, headers });
  const confirm = (token: unknown) => app.call("POST", CONFIRM, { body: { token } });
  const state = async () => {
    const user = (await app.store.users.findById(ann.user.id))!;
    return { email: user.email, username: user.username, emailVerifiedAt: user.emailVerifiedAt };
  };
  return { ...app, ann, change, confirm, state };
}

describe("e-mail change with mail on", () => {
  test("202 with the pending address; the new address's link makes the change, verified; the old one is told", async () => {
    const { store, ann, call, change, confirm, state } = await changeApp();
    const before = await state();
    const reply = await change({ email: "Ann@Example.ORG", current_password: ann.password });
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ pending_email: "ann@example.org", user: { email: "ann@example.com" } });
    expect(reply.headers.get("etag")).toBeNull();
    expect(await state()).toEqual(before);
    const { mail, link, token } = await mailedToken(store, "ann@example.org", "email_change");
    expect(mail.userId).toBe(ann.user.id);
    expect(link).toStartWith("http://localhost:8080/svc/account/confirm-email-change#token=");
    const confirmed = await confirm(token);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ id: ann.user.id, email: "ann@example.org" });
    const after = await state();
    expect(after.email).toBe("ann@example.org");
    expect(after.emailVerifiedAt).not.toBeNull();
    const [notice] = (await store.mail.list({ recipient: "ann@example.com", limit: 10 })).filter(
      (m) => m.kind === "email_changed",
    );
    expect((await openBodies(notice!, testConfig().jwt.secret))?.textBody).toContain("ann@example.org");
    // The session goes on, and the new address signs in.
    expect((await call("GET", `${USERS}/me`, { token: ann.token })).body.email).toBe("ann@example.org");
    const login = await call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann@example.org", password: ann.password },
    });
    expect(login.status).toBe(200);
    const actions = (await store.audit.list({ targetId: ann.user.id, limit: 20 })).map((e) => e.action);
    expect(actions).toContain("email_change.requested");
    expect(actions).toContain("email_change.confirmed");
    // Spent: a second confirmation is refused, and changes nothing.
    expectProblem(await confirm(token), 400, "invalid_mail_token");
  });

  test("a username in the same request changes at once; the 202's user shows it", async () => {
    const { change, ann, state } = await changeApp();
    const reply = await change({ username: "annie", email: "ann@example.org", current_password: ann.password });
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ pending_email: "ann@example.org", user: { username: "annie" } });
    expect(await state()).toMatchObject({ username: "annie", email: "ann@example.com" });
  });

  test("refused at once: a taken address (409), no or a wrong password; no mail, nothing changed", async () => {
    const { change, ann, signUp, state, store } = await changeApp();
    await signUp("bob");
    const before = await state();
    expectProblem(await change({ email: "bob@example.com", current_password: ann.password }), 409, "email_taken");
    expectProblem(await change({ email: "ann@example.org" }), 400, "validation_failed");
    expectProblem(
      await change({ email: "ann@example.org", current_password: "wrong horse battery" }),
      403,
      "current_password_mismatch",
    );
    expectProblem(await change({ email: "not an address", current_password: ann.password }), 400, "validation_failed");
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "bob@example.com", "email_change")).toBe(0);
    expect(await mailCount(store, "ann@example.org")).toBe(0);
  });

  test("an address taken between the request and the confirmation: 409 email_taken, nothing changed", async () => {
    const { change, ann, call, confirm, state, store } = await changeApp();
    expect((await change({ email: "new@example.com", current_password: ann.password })).status).toBe(202);
    const { token } = await mailedToken(store, "new@example.com", "email_change");
    const created = await call("POST", `${USERS}/create`, {
      body: { username: "newcomer", email: "new@example.com", password: "correct horse battery" },
    });
    expect(created.status).toBe(201);
    const before = await state();
    expectProblem(await confirm(token), 409, "email_taken");
    expect(await state()).toEqual(before);
    expect(await mailCount(store, "ann@example.com", "email_changed")).toBe(0);
  });

  test("unknown, replaced, other-kind, expired and malformed tokens: 400 with their code, nothing changed", async () => {
    const { change, ann, call, confirm, state, store } = await changeApp();
    const before = await state();
    const refused = async (token: unknown, status: number, code: string) => {
      expectProblem(await confirm(token), status, code);
      expect(await state()).toEqual(before);
    };
    await refused(newLinkToken(), 400, "invalid_mail_token");
    await refused("not-a-token", 400, "validation_failed");
    await refused(42, 400, "validation_failed");
    expect((await change({ email: "one@example.com", current_password: ann.password })).status).toBe(202);
    const first = await mailedToken(store, "one@example.com", "email_change");
    expect((await change({ email: "two@example.com", current_password: ann.password })).status).toBe(202);
    await refused(first.token, 400, "invalid_mail_token");
    // A reset's token is not a change's.
    expect(
      (await call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email: ann.user.email } })).status,
    ).toBe(202);
    await refused((await mailedToken(store, ann.user.email, "password_reset")).token, 400, "invalid_mail_token");
    const old = newLinkToken();
    const at = new Date(Date.now() - 25 * 3600_000).toISOString();
    const record = { digest: linkTokenDigest(old), kind: "email_change" as const, userId: ann.user.id };
    const expiresAt = new Date(Date.now() - 3600_000).toISOString();
    const mail = (await store.mail.list({ recipient: "two@example.com", limit: 1 }))[0]!;
    const event = auditEvent("email_change.requested", { target: ann.user.id, origin: CLI_ORIGIN }, at);
    const written = await store.emailChanges.request(
      { ...record, email: "three@example.com", createdAt: at, expiresAt },
      { ...mail, id: Bun.randomUUIDv7(), messageId: `<${Bun.randomUUIDv7()}@localhost>` },
      event,
    );
    expect(written).toBe(true);
    await refused(old, 400, "mail_token_expired");
  });
});

describe("e-mail change with mail off", () => {
  test("the change is made at once (200), as before; no mail", async () => {
    const { change, ann, store, confirm } = await changeApp({ config: mailOff() });
    const reply = await change({ email: "ann@example.org", current_password: ann.password });
    expect(reply.status).toBe(200);
    expect(reply.body.email).toBe("ann@example.org");
    expect(await mailCount(store, "ann@example.org")).toBe(0);
    expectProblem(await confirm(newLinkToken()), 400, "invalid_mail_token");
  });
});
