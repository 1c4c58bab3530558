// /svc-api/v1/admin/mail: the outbox for the console's Mail view, newest first and never a body, and resending
// a failed mail; administrators only, 409 mail_not_configured while mail is off. The mail metrics.
import { describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import type { OutboxMail } from "../../src/db/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { expectProblem, testApp, testConfig } from "../helpers.ts";
import { ADMIN, adminApp } from "../support/admin.ts";

const PATH = `${ADMIN}/mail`;
const composer = createComposer({
  productName: "svc",
  publicUrl: "https://svc.example.com",
  secret: testConfig().jwt.secret,
});
const mail = (to: string, userId: string | null = null): OutboxMail =>
  composer.compose(
    "password_reset",
    { address: to, userId },
    { username: to, link: "https://svc.example.com/svc/account/reset-password#token=SECRET-TOKEN" },
  );
/** A notice: no link in it, so it can be resent once given up on. */
const notice = (to: string): OutboxMail =>
  composer.compose("password_changed", { address: to, userId: null }, { username: to });
const failedEvent = () => auditEvent("mail.failed", { origin: { address: null, requestId: null } });

/** An administrator and three mails in the outbox; verification off, so that the sign-up adds no fourth. */
async function withMails() {
  const app = await adminApp({ mail: { ...testConfig().mail, verification: "off" } });
  const mails = [notice("a@example.com"), mail("b@example.com", app.root.user.id), mail("c@example.com")];
  for (const m of mails) await app.store.mail.enqueue(m);
  await app.store.mail.markFailed(mails[0]!.id, "451 4.3.0 try later", failedEvent());
  await app.store.mail.markSent(mails[2]!.id, new Date().toISOString());
  return { ...app, mails };
}

describe("GET admin/mail", () => {
  test("lists the outbox newest first: envelope and state, never the bodies", async () => {
    const { call, root, mails } = await withMails();
    const reply = await call("GET", PATH, { token: root.token });
    expect(reply.status).toBe(200);
    expect(reply.body.map((m: { id: string }) => m.id)).toEqual([mails[2]!.id, mails[1]!.id, mails[0]!.id]);
    expect(reply.body[1]).toEqual({
      id: mails[1]!.id,
      kind: "password_reset",
      recipient: "b@example.com",
      user_id: root.user.id,
      subject: mails[1]!.subject,
      status: "pending",
      attempts: 0,
      created_at: mails[1]!.createdAt,
      next_attempt_at: mails[1]!.createdAt,
      sent_at: null,
      last_error: null,
    });
    expect(reply.body[2]).toMatchObject({ status: "failed", attempts: 1, last_error: "451 4.3.0 try later" });
    expect(reply.body[0]).toMatchObject({ status: "sent", attempts: 1 });
    expect(reply.text).not.toContain("SECRET-TOKEN");
    expect(reply.headers.get("etag")).toBeTruthy();
  });

  test("filters by status and pages by before, announcing the next page", async () => {
    const { call, root, mails } = await withMails();
    const failed = await call("GET", `${PATH}?status=failed`, { token: root.token });
    expect(failed.body.map((m: { id: string }) => m.id)).toEqual([mails[0]!.id]);
    const first = await call("GET", `${PATH}?limit=2`, { token: root.token });
    expect(first.body).toHaveLength(2);
    expect(first.headers.get("link")).toBe(`<${PATH}?limit=2&before=${mails[1]!.id}>; rel="next"`);
    const next = await call("GET", `${PATH}?limit=2&before=${mails[1]!.id}`, { token: root.token });
    expect(next.body.map((m: { id: string }) => m.id)).toEqual([mails[0]!.id]);
    expect(next.headers.get("link")).toBeNull();
  });

  for (const [query, field] of [
    ["status=lost", "status"],
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=ten", "limit"],
    ["before=nope", "before"],
    ["recipient=a@example.com", "recipient"],
  ] as const)
    test(`?${query} is 400 validation_failed naming ${field}`, async () => {
      const { call, root } = await withMails();
      const reply = await call("GET", `${PATH}?${query}`, { token: root.token });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    });

  test("is for administrators: 401 without a token, 403 forbidden for a user", async () => {
    const { call, signUp } = await withMails();
    expectProblem(await call("GET", PATH), 401, "unauthorized");
    const ann = await signUp("ann");
    expectProblem(await call("GET", PATH, { token: ann.token }), 403, "forbidden");
  });
});

describe("POST admin/mail/{id}/resend", () => {
  test("puts a failed mail back, pending and due now; a second resend is 409 mail_not_failed", async () => {
    const { call, root, mails, store } = await withMails();
    const reply = await call("POST", `${PATH}/${mails[0]!.id}/resend`, { token: root.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: mails[0]!.id, status: "pending", attempts: 1 });
    expect(reply.body.next_attempt_at).toBe(reply.body.created_at);
    expect(await store.mail.pending()).toBe(2);
    const again = await call("POST", `${PATH}/${mails[0]!.id}/resend`, { token: root.token });
    expectProblem(again, 409, "mail_not_failed");
  });

  test("a failed mail with a link (its token expired by then) is 409 mail_not_resendable and stays failed", async () => {
    const { call, root, store } = await withMails();
    const link = "https://svc.example.com/svc/account/page#token=SECRET-TOKEN";
    const kinds = ["verify_email", "password_reset", "email_change"] as const;
    const linked = kinds.map((kind) =>
      composer.compose(
        kind,
        { address: "d@example.com", userId: null },
        { username: "d", link, email: "d@example.com" },
      ),
    );
    await store.mail.enqueue(linked);
    for (const m of linked) await store.mail.markFailed(m.id, "550 no such user", failedEvent());
    const before = (await call("GET", PATH, { token: root.token })).body;
    for (const m of linked) {
      const reply = await call("POST", `${PATH}/${m.id}/resend`, { token: root.token });
      expectProblem(reply, 409, "mail_not_resendable");
      expect(reply.body.detail).toContain("new link");
    }
    expect((await call("GET", PATH, { token: root.token })).body).toEqual(before);
    expect(await store.mail.pending()).toBe(1);
  });

  test("a pending or sent mail is 409 mail_not_failed and stays as it was", async () => {
    const { call, root, mails } = await withMails();
    const before = (await call("GET", PATH, { token: root.token })).body;
    for (const id of [mails[1]!.id, mails[2]!.id])
      expectProblem(await call("POST", `${PATH}/${id}/resend`, { token: root.token }), 409, "mail_not_failed");
    expect((await call("GET", PATH, { token: root.token })).body).toEqual(before);
  });

  test("an unknown or malformed id is 404 not_found", async () => {
    const { call, root } = await withMails();
    for (const id of [Bun.randomUUIDv7(), "not-a-mail"])
      expectProblem(await call("POST", `${PATH}/${id}/resend`, { token: root.token }), 404, "not_found");
  });

  test("is for administrators: 403 forbidden for a user, and nothing changes", async () => {
    const { call, signUp, mails, store } = await withMails();
    const ann = await signUp("ann");
    const reply = await call("POST", `${PATH}/${mails[0]!.id}/resend`, { token: ann.token });
    expectProblem(reply, 403, "forbidden");
    expect((await store.mail.list({ limit: 10, status: "failed" })).map((m) => m.id)).toEqual([mails[0]!.id]);
  });
});

describe("with mail off", () => {
  test("both routes answer 409 mail_not_configured", async () => {
    const base = testConfig().mail;
    const { call, root } = await adminApp({ mail: { ...base, transport: { kind: "off" }, verification: "off" } });
    expectProblem(await call("GET", PATH, { token: root.token }), 409, "mail_not_configured");
    const resend = await call("POST", `${PATH}/${Bun.randomUUIDv7()}/resend`, { token: root.token });
    expectProblem(resend, 409, "mail_not_configured");
  });

  test("the metrics leave the mail series out; with mail on they are there", async () => {
    const base = testConfig().mail;
    const off = await adminApp({ mail: { ...base, transport: { kind: "off" }, verification: "off" } });
    expect((await off.call("GET", "/svc/metrics")).text).not.toContain("svc_mail_");
    const on = await withMails();
    const text = (await on.call("GET", "/svc/metrics")).text;
    expect(text).toMatch(/svc_mail_outbox_pending\{[^}]*\} 1\n/);
    expect(text).toMatch(/svc_mail_sent_total\{[^}]*\} 0\n/);
    expect(text).toMatch(/svc_mail_failures_total\{[^}]*\} 0\n/);
  });

  test("the metrics read the sender's figures, and health its state: failing until a mail is sent again", async () => {
    const figures = { sent: 3, failures: 2, health: "failing" as "ok" | "failing" };
    const app = await testApp({ mail: () => figures });
    const text = (await app.call("GET", "/svc/metrics")).text;
    expect(text).toMatch(/svc_mail_sent_total\{[^}]*\} 3\n/);
    expect(text).toMatch(/svc_mail_failures_total\{[^}]*\} 2\n/);
    const health = await app.call("GET", "/svc/health");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: "ok", mail: "failing" });
    figures.health = "ok";
    expect((await app.call("GET", "/svc/health")).body.mail).toBe("ok");
    const base = testConfig().mail;
    const off = await testApp({ config: { mail: { ...base, transport: { kind: "off" }, verification: "off" } } });
    expect("mail" in (await off.call("GET", "/svc/health")).body).toBe(false);
  });
});
