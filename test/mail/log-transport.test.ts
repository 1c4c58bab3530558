// Without SVC_SMTP_URL, in development and test, each mail is one JSON log line: recipient, subject and link,
// never the body (which holds the one-time token a second time, and the rest of the text).
import { expect, test } from "bun:test";
import { parseConfig } from "../../src/config/index.ts";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { createSender } from "../../src/mail/sender.ts";
import { openTransport } from "../../src/mail/transport.ts";
import { testConfig } from "../helpers.ts";

test("each mail is logged as one line with its recipient, subject and link; the outbox records it sent", async () => {
  const config = parseConfig({ SVC_ENV: "development", SVC_PORT: "8123" }).mail;
  expect(config.transport).toEqual({ kind: "log" });
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const logger = {
    info(fields: object | string, message = "") {
      lines.push({ fields: fields as Record<string, unknown>, message });
    },
    warn() {},
    error() {},
    debug() {},
  };
  const store = openSqliteStore(":memory:");
  const transport = await openTransport(config, logger);
  const sender = createSender({ store, transport: transport!, logger, secret: testConfig().jwt.secret });
  const link = `${config.publicUrl}/svc/account/reset-password#token=tok-123`;
  const mail = createComposer({ ...config, secret: testConfig().jwt.secret }).compose(
    "password_reset",
    { address: "ann@example.com", userId: null },
    { username: "ann", link },
  );
  await store.mail.enqueue(mail);
  expect(await sender.sendDue()).toBe(1);
  expect(lines).toEqual([
    {
      message: "mail (SVC_SMTP_URL is not set: logged, not sent)",
      fields: {
        mail_id: mail.id,
        kind: "password_reset",
        to: "ann@example.com",
        subject: "Reset your svc password",
        link: "http://localhost:8123/svc/account/reset-password#token=tok-123",
        message_id: mail.messageId,
      },
    },
  ]);
  expect(JSON.stringify(lines)).not.toContain("choose a new password");
  expect((await store.mail.list({ limit: 1 }))[0]!.status).toBe("sent");
  await sender.stop();
  await store.close();
});

test("with mail off there is no transport", async () => {
  const config = parseConfig({
    SVC_ENV: "production",
    SVC_JWT_SECRET: "3q2+7wAbCdEfGhIjKlMnOpQrStUvWxYz0123456789/+==",
    SVC_DATABASE_URL: "sqlite::memory:",
  }).mail;
  expect(await openTransport(config, { info() {} })).toBeNull();
});
