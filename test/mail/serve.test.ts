// `svc serve` runs the mail sender: mails waiting in the outbox when it starts (a previous process's) go
// out through SVC_SMTP_URL; metrics and health tell of it; SIGTERM stops it cleanly.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { SOURCE_SVC, spawnProcess } from "../support/cli.ts";
import { startSmtp, type TestSmtp } from "../support/smtp.ts";
import { waitUntil } from "../support/wait.ts";

let dir: string;
let smtp: TestSmtp;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-mail-serve-"));
  smtp = await startSmtp({ auth: false });
});
afterAll(async () => {
  await smtp.close();
  rmSync(dir, { recursive: true, force: true });
});

test("mails left in the outbox are sent by svc serve, counted in its metrics, shown in its health", async () => {
  const path = join(dir, "svc.db");
  const store = openSqliteStore(path);
  const secret = "mail-serve-test-secret-of-at-least-32-bytes";
  const composer = createComposer({
    productName: "Acme",
    publicUrl: "https://svc.example.com",
    secret: new TextEncoder().encode(secret),
  });
  const mails = ["ann", "bob", "cat"].map((name) =>
    composer.compose("password_changed", { address: `${name}@example.com`, userId: null }, { username: name }),
  );
  await store.mail.enqueue(mails);
  await store.close();

  const proc = spawnProcess(SOURCE_SVC, {
    env: {
      PATH: process.env.PATH ?? "",
      SVC_ENV: "development",
      SVC_DATABASE_URL: `sqlite:${path}`,
      SVC_PORT: "0",
      SVC_JWT_SECRET: secret,
      SVC_SMTP_URL: smtp.url,
      SVC_MAIL_FROM: "Acme <acme@example.com>",
      SVC_PUBLIC_URL: "https://svc.example.com",
    },
  });
  const lines: Array<Record<string, unknown>> = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let text = "";
    const reader = proc.stdout.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += decoder.decode(read.value);
      const parts = text.split("\n");
      text = parts.pop()!;
      for (const line of parts) if (line.startsWith("{")) lines.push(JSON.parse(line));
    }
  })();
  try {
    await waitUntil(() => lines.some((l) => l.msg === "svc listening"), { what: "svc listening" });
    const listening = lines.find((l) => l.msg === "svc listening")!;
    const base = String(listening.address).replace("0.0.0.0", "127.0.0.1");
    // A request loads the app, which starts the sender at once.
    const metrics = async () => (await fetch(`${base}/svc/metrics`)).text();
    expect(await metrics()).toContain("svc_mail_sent_total");
    await waitUntil(() => smtp.received.length === 3, { what: "the three mails" });
    expect(smtp.received.map((r) => r.mail.messageId).sort()).toEqual(mails.map((m) => m.messageId).sort());
    expect(smtp.received[0]!.mail.from?.text).toBe('"Acme" <acme@example.com>');
    await waitUntil(async () => /svc_mail_outbox_pending\{[^}]*\} 0/.test(await metrics()), { what: "none pending" });
    const text = await metrics();
    expect(text).toMatch(/svc_mail_sent_total\{[^}]*\} 3/);
    expect(text).toMatch(/svc_mail_failures_total\{[^}]*\} 0/);
    const health = await (await fetch(`${base}/svc/health`)).json();
    expect(health.mail).toBe("ok");
  } finally {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    await reading;
  }
  expect(lines.some((l) => l.msg === "svc stopped")).toBe(true);
});
