// Two instances on one PostgreSQL database sharing the outbox: each mail claimed by one of them (row
// locks, SKIP LOCKED) and delivered once through a real SMTP server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mail as mailConfig } from "../../src/config/index.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { createSender } from "../../src/mail/sender.ts";
import { openTransport } from "../../src/mail/transport.ts";
import { postgresAvailable } from "../postgres.ts";
import { closeInstances, type Instances, openInstances } from "../support/instances.ts";
import { startSmtp, type TestSmtp } from "../support/smtp.ts";
import { testConfig } from "../helpers.ts";
import { waitUntil } from "../support/wait.ts";

const available = await postgresAvailable();
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const { secret } = testConfig().jwt;

describe.skipIf(!available)("two instances sharing the outbox on one PostgreSQL database", () => {
  let instances: Instances;
  let smtp: TestSmtp;

  beforeAll(async () => {
    [instances, smtp] = await Promise.all([openInstances("mail"), startSmtp()]);
  });
  afterAll(async () => {
    await smtp?.close();
    await closeInstances(instances ?? {});
  });

  test("200 mails enqueued: 200 delivered, each once, by the two senders together", async () => {
    const config = mailConfig(
      { SVC_SMTP_URL: smtp.url, SVC_MAIL_FROM: "svc@example.com", SVC_PUBLIC_URL: "https://svc.example.com" },
      true,
      8080,
    );
    const senders = await Promise.all(
      instances.stores.slice(0, 2).map(async (store) =>
        createSender({
          store,
          transport: (await openTransport(config, quiet, { ca: smtp.ca }))!,
          logger: quiet,
          secret,
        }),
      ),
    );
    for (const sender of senders) sender.start();
    const composer = createComposer({ ...config, secret });
    const mails = Array.from({ length: 200 }, (_, i) =>
      composer.compose("verify_email", { address: `user${i}@example.com`, userId: null }, { username: `user${i}` }),
    );
    // Enqueued in slices, as sign-ups would be, while both senders are at work.
    for (let i = 0; i < mails.length; i += 20) await instances.stores[0]!.mail.enqueue(mails.slice(i, i + 20));
    await waitUntil(async () => (await instances.stores[2]!.mail.pending()) === 0 && smtp.received.length >= 200, {
      what: "200 mails delivered",
      timeoutMs: 60_000,
    });
    await Promise.all(senders.map((sender) => sender.stop()));
    const ids = smtp.received.map((r) => r.mail.messageId);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    expect(new Set(ids)).toEqual(new Set(mails.map((m) => m.messageId)));
    const [a, b] = senders.map((sender) => sender.figures().sent);
    expect(a! + b!).toBe(200);
    const sent = await instances.stores[2]!.mail.list({ status: "sent", limit: 500 });
    expect(sent).toHaveLength(200);
    expect(sent.every((row) => row.attempts === 1)).toBe(true);
  });
});
