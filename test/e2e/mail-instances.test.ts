// Two compiled binaries on one PostgreSQL database, sending through one real SMTP server (STARTTLS and
// AUTH): 200 sign-ups spread over both, 200 verification mails, each delivered once (by recipient and by
// Message-ID), the two senders sharing the outbox. (test/mail/instances.test.ts holds 200 mails enqueued
// directly, in process; this is the sign-ups' version #55 names, through HTTP.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase, postgresAvailable, type TestDatabase } from "../postgres.ts";
import { startSmtp, type TestSmtp } from "../support/smtp.ts";
import { waitUntil } from "../support/wait.ts";
import { arrivals, linkIn, mailSettings, PASSWORD } from "./support/mail.ts";
import { emptyFolderWithBinary, json, prepareBinary, type Running, start, stop } from "./support/svc.ts";

const available = await postgresAvailable();
const SIGN_UPS = 200;

describe.skipIf(!available)("two binaries on one PostgreSQL database", () => {
  let smtp: TestSmtp;
  let database: TestDatabase;
  const instances: Running[] = [];

  beforeAll(async () => {
    await prepareBinary();
    [smtp, database] = await Promise.all([startSmtp(), createTestDatabase("mail_e2e")]);
    for (let i = 0; i < 2; i++) {
      const dir = emptyFolderWithBinary();
      instances.push(
        await start(dir, {
          SVC_DATABASE_URL: database.url,
          ...mailSettings(smtp, dir),
          SVC_ENV: "test",
          SVC_PASSWORD_COST: "minimal",
          // Every sign-up comes from 127.0.0.1: the per-client limit (30 an hour) would stop this test's own.
          SVC_SIGNUP_CLIENT_MAX: "1000",
        }),
      );
    }
  }, 300_000);
  afterAll(async () => {
    for (const running of instances) expect(await stop(running)).toBe(0);
    await smtp?.close();
    await database?.drop();
  });

  test("200 sign-ups spread over both: 200 verification mails, each once", async () => {
    const names = Array.from({ length: SIGN_UPS }, (_, i) => `user${String(i).padStart(3, "0")}`);
    const on = (i: number) => instances[i % 2]!.base;
    // Ten at a time, alternating instances, as a load balancer would spread them.
    for (let i = 0; i < names.length; i += 10) {
      const replies = await Promise.all(
        names.slice(i, i + 10).map((username, j) =>
          json(on(i + j), "POST", "/svc-api/v1/users/create", {
            username,
            email: `${username}@example.com`,
            password: PASSWORD,
          }),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 201));
    }
    const figure = async (base: string, name: string) =>
      Number(
        new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m").exec(await (await fetch(`${base}/svc/metrics`)).text())?.[1],
      );
    await waitUntil(
      async () => smtp.received.length >= SIGN_UPS && (await figure(on(0), "svc_mail_outbox_pending")) === 0,
      { what: "200 mails delivered, none pending", timeoutMs: 120_000, everyMs: 200 },
    );

    expect(smtp.received).toHaveLength(SIGN_UPS);
    const recipients = smtp.received.map((r) => r.to.join(","));
    expect(recipients.sort()).toEqual(names.map((n) => `${n}@example.com`));
    const counts = arrivals(smtp.received);
    expect(counts.size).toBe(SIGN_UPS);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(smtp.received.every((r) => r.secure && r.user === "mailer")).toBe(true);
    const sent = await Promise.all(instances.map((running) => figure(running.base, "svc_mail_sent_total")));
    expect(sent[0]! + sent[1]!).toBe(SIGN_UPS);
    // Each mail's token verifies its own account, on either instance.
    for (const [i, received] of smtp.received.entries()) {
      const { token } = linkIn(received, "/svc/account/verify-email");
      const verified = await json(on(i), "POST", "/svc-api/v1/auth/email/verify", { token });
      expect(verified.status).toBe(200);
      expect(verified.body.email).toBe(received.to[0]);
    }
  }, 240_000);
});
