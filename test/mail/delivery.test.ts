// Mail delivered through a real SMTP server (test/support/smtp.ts: STARTTLS, AUTH): what arrives, a server
// that refuses for a while, giving up after a day (the sender's clock moved, no sleeps), and the loop
// woken by mail enqueued in this process.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import { mail as mailConfig, type MailConfig } from "../../src/config/index.ts";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { createSender, GIVE_UP_AFTER_MS, type MailSender } from "../../src/mail/sender.ts";
import { openTransport } from "../../src/mail/transport.ts";
import { SMTP_USER, startSmtp, type TestSmtp } from "../support/smtp.ts";
import { testConfig } from "../helpers.ts";
import { waitUntil } from "../support/wait.ts";

const FROM = "svc <svc@example.com>";
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
let smtp: TestSmtp;
let config: MailConfig;
let store: VersionedStore;
let sender: MailSender;
const clock = { ms: Date.parse("2026-03-01T12:00:00.000Z") };
const now = () => clock.ms;
const { secret } = testConfig().jwt;
const composer = () => createComposer({ ...config, secret }, now);
const compose = (to: string) =>
  composer().compose(
    "verify_email",
    { address: to, userId: Bun.randomUUIDv7() },
    { username: "ann", link: "https://svc.example.com/svc/account/verify-email#token=abc" },
  );

/** A notice: it carries no link, so an administrator may resend it once given up on. */
const notice = (to: string) =>
  composer().compose("password_changed", { address: to, userId: Bun.randomUUIDv7() }, { username: "ann" });

beforeAll(async () => {
  smtp = await startSmtp();
  config = mailConfig(
    { SVC_SMTP_URL: smtp.url, SVC_MAIL_FROM: FROM, SVC_PUBLIC_URL: "https://svc.example.com" },
    true,
    8080,
  );
});
afterAll(() => smtp.close());
beforeEach(async () => {
  smtp.received.length = 0;
  smtp.accept();
  store = openSqliteStore(":memory:");
  const transport = await openTransport(config, quiet, { ca: smtp.ca });
  sender = createSender({ store, transport: transport!, logger: quiet, now, secret });
});
afterEach(async () => {
  await sender.stop();
  await store.close();
});

describe("delivery through SMTP", () => {
  test("a mail arrives with its From, To, Subject, Message-ID, text and HTML, over STARTTLS and AUTH", async () => {
    const mail = compose("ann@example.com");
    await store.mail.enqueue(mail);
    expect(await sender.sendDue()).toBe(1);
    expect(smtp.received).toHaveLength(1);
    const [got] = smtp.received;
    expect(got!.secure).toBe(true);
    expect(got!.user).toBe(SMTP_USER);
    expect(got!.to).toEqual(["ann@example.com"]);
    expect(got!.from).toBe("svc@example.com");
    expect(got!.mail.from?.text).toBe('"svc" <svc@example.com>');
    expect(got!.mail.subject).toBe(mail.subject);
    expect(got!.mail.messageId).toBe(mail.messageId);
    expect(got!.mail.text?.trim()).toBe((await openBodies(mail, secret))!.textBody.trim());
    expect(got!.mail.html).toContain("https://svc.example.com/svc/account/verify-email#token=abc");
    const [row] = await store.mail.list({ limit: 1 });
    expect(row).toMatchObject({ status: "sent", attempts: 1, sentAt: new Date(clock.ms).toISOString() });
    expect(sender.figures()).toEqual({ sent: 1, failures: 0, health: "ok" });
    expect(await store.mail.pending()).toBe(0);
  });

  test("a wrong password sends nothing: the mail waits, failing", async () => {
    const wrong = mailConfig(
      {
        SVC_SMTP_URL: smtp.url.replace("s3cret", "wrong"),
        SVC_MAIL_FROM: FROM,
        SVC_PUBLIC_URL: "https://svc.example.com",
      },
      true,
      8080,
    );
    const transport = await openTransport(wrong, quiet, { ca: smtp.ca });
    const refused = createSender({ store, transport: transport!, logger: quiet, now, secret });
    await store.mail.enqueue(compose("ann@example.com"));
    expect(await refused.sendDue()).toBe(0);
    await refused.stop();
    expect(smtp.received).toEqual([]);
    const [row] = await store.mail.list({ limit: 1 });
    expect(row).toMatchObject({ status: "pending", attempts: 1 });
    expect(row!.lastError).toContain("535");
    expect(row!.lastError).not.toContain("wrong");
  });

  for (const at of ["rcpt", "data"] as const) {
    test(`a server refusing at ${at.toUpperCase()} for a while, then accepting: every mail arrives, none twice`, async () => {
      const mails = Array.from({ length: 12 }, (_, i) => compose(`user${i}@example.com`));
      await store.mail.enqueue(mails);
      smtp.refuse(at);
      expect(await sender.sendDue()).toBe(0);
      expect(smtp.refusals()).toBeGreaterThanOrEqual(12);
      expect(sender.figures()).toMatchObject({ sent: 0, failures: 12, health: "failing" });
      // Not yet due: nothing is tried before its back-off has passed.
      expect(await sender.sendDue()).toBe(0);
      expect(sender.figures().failures).toBe(12);
      clock.ms += 5_000;
      expect(await sender.sendDue()).toBe(0);
      expect(sender.figures().failures).toBe(24);
      smtp.accept();
      clock.ms += 10_000;
      expect(await sender.sendDue()).toBe(12);
      clock.ms += 3_600_000;
      expect(await sender.sendDue()).toBe(0);
      const ids = smtp.received.map((r) => r.mail.messageId).sort();
      expect(ids).toEqual(mails.map((m) => m.messageId).sort());
      expect(sender.figures()).toEqual({ sent: 12, failures: 24, health: "ok" });
      const rows = await store.mail.list({ limit: 20 });
      expect(rows.every((r) => r.status === "sent" && r.attempts === 3)).toBe(true);
    });
  }

  test("a mail refused for a day is given up on: failed, audited, never sent", async () => {
    const mail = notice("ann@example.com");
    const created = clock.ms;
    await store.mail.enqueue(mail);
    smtp.refuse("rcpt");
    const delays: number[] = [];
    for (;;) {
      await sender.sendDue();
      const [row] = await store.mail.list({ limit: 1 });
      if (row!.status !== "pending") break;
      const next = Date.parse(row!.nextAttemptAt);
      delays.push(next - clock.ms);
      clock.ms = next;
    }
    // 5 s doubling, at most an hour apart, the last attempt on the day's end.
    expect(delays.slice(0, 11)).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600].map((s) => s * 1000));
    expect(clock.ms).toBe(created + GIVE_UP_AFTER_MS);
    const [row] = await store.mail.list({ limit: 1 });
    expect(row).toMatchObject({ status: "failed", attempts: delays.length + 1 });
    expect(row!.lastError).toContain("451");
    const events = await store.audit.list({ limit: 10, action: "mail.failed" });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ targetId: mail.userId, outcome: "failure" });
    expect(JSON.parse(events[0]!.detail!)).toMatchObject({ mail_id: mail.id, kind: "password_changed" });
    expect(smtp.received).toEqual([]);
    // Resent by an administrator, it goes out once the server takes it.
    smtp.accept();
    expect(await store.mail.resend(mail.id, new Date(clock.ms).toISOString())).toMatchObject({ status: "pending" });
    expect(await sender.sendDue()).toBe(1);
    expect(smtp.received.map((r) => r.mail.messageId)).toEqual([mail.messageId]);
  });

  test("the loop sends at once what this process enqueues, and stop() waits for the batch in hand", async () => {
    sender.start();
    await store.mail.enqueue(compose("ann@example.com"));
    await waitUntil(() => smtp.received.length === 1, { what: "the first mail" });
    await store.mail.enqueue([compose("bob@example.com"), compose("cat@example.com")]);
    await waitUntil(() => smtp.received.length === 3, { what: "three mails" });
    // A transaction that puts mail back in the outbox (a resend) wakes the sender once it has committed.
    const failed = notice("dan@example.com");
    smtp.refuse("rcpt");
    await store.mail.enqueue(failed);
    await waitUntil(() => sender.figures().failures === 1, { what: "a refused attempt" });
    smtp.accept();
    await store.mail.markFailed(
      failed.id,
      "550",
      auditEvent("mail.failed", { origin: { address: null, requestId: null } }),
    );
    await store.mail.resend(failed.id, new Date(clock.ms).toISOString());
    await waitUntil(() => smtp.received.length === 4, { what: "the resent mail" });
    await sender.stop();
    expect(smtp.received.map((r) => r.to[0]).sort()).toEqual([
      "ann@example.com",
      "bob@example.com",
      "cat@example.com",
      "dan@example.com",
    ]);
    expect(await store.mail.pending()).toBe(0);
  });
});
