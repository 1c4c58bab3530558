// The compiled binary delivering the outbox through a real SMTP server (test/support/smtp.ts: STARTTLS with
// a certificate trusted through NODE_EXTRA_CA_CERTS, and AUTH) that refuses for a while and then accepts:
// every mail arrives, none twice; health says failing, then ok; the metrics count both.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { startSmtp, type TestSmtp } from "../support/smtp.ts";
import { waitUntil } from "../support/wait.ts";
import { emptyFolderWithBinary, prepareBinary, type Running, SECRET, start, stop } from "./support/svc.ts";

let smtp: TestSmtp;
let scratch: string;
beforeAll(async () => {
  await prepareBinary();
  smtp = await startSmtp();
  scratch = mkdtempSync(join(tmpdir(), "svc-mail-e2e-"));
}, 300_000);
afterAll(async () => {
  await smtp?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const composer = createComposer({
  productName: "Acme",
  publicUrl: "https://svc.example.com",
  // The binary's, which it opens the bodies with.
  secret: new TextEncoder().encode(SECRET),
});
const mailsFor = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) =>
    composer.compose("password_changed", { address: `${prefix}${i}@example.com`, userId: null }, { username: "u" }),
  );

test("a server refusing for a while, then accepting: every mail arrives once, over STARTTLS and AUTH", async () => {
  const dir = emptyFolderWithBinary();
  const path = join(dir, "svc.db");
  const ca = join(scratch, "smtp-ca.pem");
  writeFileSync(ca, smtp.ca);
  // Owed before svc starts (a previous process's): the outbox is a table, and these wait in it.
  const first = mailsFor("early", 15);
  const store = openSqliteStore(path);
  await store.mail.enqueue(first);
  await store.close();

  smtp.refuse("rcpt");
  const running: Running = await start(dir, {
    SVC_DATABASE_URL: `sqlite:${path}`,
    SVC_SMTP_URL: smtp.url,
    SVC_MAIL_FROM: "Acme <acme@example.com>",
    SVC_PUBLIC_URL: "https://svc.example.com",
    NODE_EXTRA_CA_CERTS: ca,
  });
  const health = async () => (await (await fetch(`${running.base}/svc/health`)).json()).mail as string;
  const metrics = async () => (await fetch(`${running.base}/svc/metrics`)).text();
  const figure = (text: string, name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m").exec(text)?.[1]);
  try {
    await waitUntil(() => smtp.refusals() >= 15, { what: "the server refusing each mail", timeoutMs: 30_000 });
    await waitUntil(async () => (await health()) === "failing", { what: "health failing" });
    expect(smtp.received).toEqual([]);
    expect(figure(await metrics(), "svc_mail_outbox_pending")).toBe(15);

    smtp.accept();
    await waitUntil(() => smtp.received.length >= 15, { what: "the refused mails, retried", timeoutMs: 60_000 });
    // Written by another process while svc runs: found at the sender's next poll.
    const later = mailsFor("later", 5);
    const writer = openSqliteStore(path);
    await writer.mail.enqueue(later);
    await writer.close();
    await waitUntil(() => smtp.received.length >= 20, { what: "the later mails", timeoutMs: 30_000 });
    await waitUntil(async () => figure(await metrics(), "svc_mail_outbox_pending") === 0, { what: "none pending" });

    const ids = smtp.received.map((r) => r.mail.messageId);
    expect(ids.sort()).toEqual([...first, ...later].map((m) => m.messageId).sort());
    expect(smtp.received.every((r) => r.secure && r.user === "mailer")).toBe(true);
    expect(await health()).toBe("ok");
    const text = await metrics();
    expect(figure(text, "svc_mail_sent_total")).toBe(20);
    expect(figure(text, "svc_mail_failures_total")).toBeGreaterThanOrEqual(15);
  } finally {
    expect(await stop(running)).toBe(0);
  }
  expect(smtp.received).toHaveLength(20);
  expect(running.output()).not.toContain("s3cret-smtp-pass");
}, 180_000);
