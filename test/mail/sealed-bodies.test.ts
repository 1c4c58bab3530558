// The outbox's bodies hold one-time tokens, so the database keeps them sealed under the server's secret
// (SVC_JWT_SECRET): a copy of the rows alone yields no working link. The sender opens them to send, and a
// sent mail's bodies are blanked, as are those of a mail with a link given up on.
import { describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import type { OutboxRecord, VersionedStore } from "../../src/db/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { createSender } from "../../src/mail/sender.ts";
import { logTransport } from "../../src/mail/transport.ts";
import { testApp, testConfig } from "../helpers.ts";
import { mailedToken } from "../support/mail-links.ts";

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** Every column of every outbox row, as a copy of the database would hold them. */
const rows = async (store: VersionedStore): Promise<string> => JSON.stringify(await store.mail.page(100));

/** An app that has mailed a verification (sign-up), a reset link and an e-mail change link. */
async function mailingApp() {
  const app = await testApp();
  const ann = await app.signUp("ann");
  expect(
    (await app.call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email: "ann@example.com" } })).status,
  ).toBe(202);
  const change = await app.call("PUT", "/svc-api/v1/users/", {
    token: ann.token,
    body: { email: "ann@example.org", current_password: ann.password },
  });
  expect(change.status).toBe(202);
  const tokens = [
    (await mailedToken(app.store, "ann@example.com", "verify_email")).token,
    (await mailedToken(app.store, "ann@example.com", "password_reset")).token,
    (await mailedToken(app.store, "ann@example.org", "email_change")).token,
  ];
  return { ...app, ann, tokens };
}

/** Sends every due mail through the log transport; the mails as the transport was handed them. */
async function sendAll(store: VersionedStore, secret: Uint8Array) {
  const logged: Array<Record<string, unknown>> = [];
  const transport = logTransport({
    info: (fields: object | string) =>
      void (typeof fields === "object" && logged.push(fields as Record<string, unknown>)),
  });
  const sender = createSender({ store, transport, logger: quiet, secret });
  await sender.sendDue();
  await sender.stop();
  return logged;
}

describe("sealed outbox bodies", () => {
  test("the rows hold no token, in any column, while the mails are pending", async () => {
    const { store, tokens } = await mailingApp();
    const text = await rows(store);
    expect(text).toContain("ann@example.org");
    for (const token of tokens) expect(text).not.toContain(token);
    expect(text).not.toContain("#token=");
  });

  test("the sender opens them and sends the links; once sent the bodies are blank", async () => {
    const { store, tokens } = await mailingApp();
    const logged = await sendAll(store, testConfig().jwt.secret);
    expect(logged.map((line) => line.kind).sort()).toEqual(["email_change", "password_reset", "verify_email"]);
    for (const token of tokens) expect(logged.some((line) => String(line.link).endsWith(`#token=${token}`))).toBe(true);
    const sent = await store.mail.page(100);
    expect(sent.map((mail) => [mail.status, mail.textBody, mail.htmlBody])).toEqual(sent.map(() => ["sent", "", ""]));
  });

  test("a body sealed under another secret is not sent: given up on at once, audited, blanked", async () => {
    const { store } = await testApp({ config: { mail: { ...testConfig().mail, verification: "off" } } });
    const other = createComposer({
      productName: "svc",
      publicUrl: "https://svc.example.com",
      secret: new TextEncoder().encode("another secret, of at least 32 bytes"),
    });
    const mail = other.compose(
      "password_reset",
      { address: "ann@example.com", userId: null },
      { username: "ann", link: "https://svc.example.com/svc/account/reset-password#token=x" },
    );
    await store.mail.enqueue(mail);
    expect(await sendAll(store, testConfig().jwt.secret)).toEqual([]);
    const [row] = await store.mail.page(1);
    expect(row).toMatchObject({ status: "failed", textBody: "", htmlBody: "", attempts: 1 });
    expect(row!.lastError).toContain("SVC_JWT_SECRET");
    const [event] = await store.audit.list({ action: "mail.failed", limit: 1 });
    expect(JSON.parse(event!.detail!)).toMatchObject({ mail_id: mail.id, kind: "password_reset" });
  });

  test("a failed notice keeps its sealed bodies, for a resend; one with a link is blanked", async () => {
    const { store } = await testApp({ config: { mail: { ...testConfig().mail, verification: "off" } } });
    const composer = createComposer({ ...testConfig().mail, secret: testConfig().jwt.secret });
    const notice = composer.compose("password_changed", { address: "a@example.com", userId: null }, { username: "a" });
    const link = composer.compose(
      "verify_email",
      { address: "b@example.com", userId: null },
      { username: "b", link: "https://svc.example.com/svc/account/verify-email#token=y" },
    );
    await store.mail.enqueue([notice, link]);
    const failed = () => auditEvent("mail.failed", { origin: { address: null, requestId: null } });
    await store.mail.markFailed(notice.id, "550 no", failed());
    await store.mail.markFailed(link.id, "550 no", failed());
    const byId = new Map((await store.mail.page(10)).map((row): [string, OutboxRecord] => [row.id, row]));
    const opened = await openBodies(byId.get(notice.id)!, testConfig().jwt.secret);
    expect(opened?.textBody).toContain("password");
    expect(byId.get(link.id)).toMatchObject({ textBody: "", htmlBody: "" });
  });
});
