// @svc/client's client.admin.mail and client.admin.backups against the app in process, signed in as an
// administrator made by `promote`: the outbox and resending a failed notice; the backups' state and a backup
// now (a stand-in snapshot the test releases). Off, each is its 409 as an SvcError.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditEvent } from "../../src/audit/model.ts";
import { folderDestination } from "../../src/backup/folder.ts";
import { type Backups, createBackups } from "../../src/backup/service.ts";
import type { SnapshotRequest, TakenSnapshot } from "../../src/backup/snapshot.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { testApp, testConfig, type TestAppOptions } from "../helpers.ts";
import { adminOf, all, codeOf } from "../support/in-process-client.ts";
import { mailOff } from "../support/mail-links.ts";
import { waitUntil } from "../support/wait.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-client-admin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function adminClient(options: TestAppOptions = {}) {
  const app = await testApp(options);
  return { app, ...(await adminOf(app)) };
}

describe("client.admin.mail", () => {
  test("list: the outbox newest first, by status, page by page; resend: a failed notice pending again", async () => {
    // Verification off: the sign-up adds no mail of its own.
    const { app, admin } = await adminClient({ config: { mail: { ...testConfig().mail, verification: "off" } } });
    const composer = createComposer({
      productName: "svc",
      publicUrl: "https://svc.example.com",
      secret: testConfig().jwt.secret,
    });
    const notices = ["a@example.com", "b@example.com", "c@example.com"].map((to) =>
      composer.compose("password_changed", { address: to, userId: null }, { username: to }),
    );
    for (const mail of notices) await app.store.mail.enqueue(mail);
    const failed = auditEvent("mail.failed", { origin: { address: null, requestId: null } });
    await app.store.mail.markFailed(notices[0]!.id, "451 4.3.0 try later", failed);

    const outbox = await all(admin.admin.mail.list());
    expect(outbox.map((m) => m.recipient)).toEqual(["c@example.com", "b@example.com", "a@example.com"]);
    expect((await all(admin.admin.mail.list({ limit: 2 }).pages())).map((page) => page.length)).toEqual([2, 1]);
    const failing = await all(admin.admin.mail.list({ status: "failed" }));
    expect(failing.map((m) => [m.id, m.last_error])).toEqual([[notices[0]!.id, "451 4.3.0 try later"]]);

    const resent = await admin.admin.mail.resend(notices[0]!.id);
    expect(resent).toMatchObject({ id: notices[0]!.id, status: "pending" });
    expect(await codeOf(admin.admin.mail.resend(notices[0]!.id))).toEqual({ status: 409, code: "mail_not_failed" });
    expect(await codeOf(admin.admin.mail.resend(crypto.randomUUID()))).toEqual({ status: 404, code: "not_found" });
  });

  test("mail off: mail_not_configured (409), for list and resend", async () => {
    const { admin } = await adminClient({ config: mailOff() });
    const off = { status: 409, code: "mail_not_configured" };
    expect(await codeOf(all(admin.admin.mail.list()))).toEqual(off);
    expect(await codeOf(admin.admin.mail.resend(crypto.randomUUID()))).toEqual(off);
  });
});

/** Backups into a folder, whose snapshots (stand-ins) finish when the test says. */
function heldBackups(): { backups: Backups; release: () => void } {
  const folder = mkdtempSync(join(dir, "to-"));
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const snapshot = (request: SnapshotRequest) => ({
    done: released.then((): TakenSnapshot => {
      const path = join(request.scratch, request.name);
      writeFileSync(path, Bun.gzipSync(new TextEncoder().encode("a snapshot")));
      const counts = { users: 1, categories: 0, sessions: 1, auditEvents: 2 };
      return { name: request.name, path, size: Bun.file(path).size, counts };
    }),
    stop() {},
  });
  const backups = createBackups({
    databasePath: join(mkdtempSync(join(dir, "db-")), "svc.db"),
    destination: folderDestination(folder),
    everySeconds: null,
    keep: 3,
    s3: {},
    version: "0.2.0",
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    snapshot,
    identity: () => "00000000000000d1",
  });
  return { backups, release };
}

describe("client.admin.backups", () => {
  test("request: a backup now, running; another meanwhile is backup_in_progress; get: the snapshot stored", async () => {
    const { backups, release } = heldBackups();
    const { admin } = await adminClient({ backups });
    const before = await admin.admin.backups.get();
    expect(before).toMatchObject({ status: "pending", running: false, snapshots: [] });
    expect((await admin.admin.backups.request()).running).toBe(true);
    expect(await codeOf(admin.admin.backups.request())).toEqual({ status: 409, code: "backup_in_progress" });
    release();
    await backups.idle();
    await waitUntil(async () => !(await admin.admin.backups.get()).running, { what: "the backup to finish" });
    const after = await admin.admin.backups.get();
    expect(after.status).toBe("ok");
    expect(after.snapshots).toHaveLength(1);
  });

  test("without SVC_BACKUP_TO: backups_not_configured (409), for get and request", async () => {
    const { admin } = await adminClient();
    for (const call of [admin.admin.backups.get(), admin.admin.backups.request()])
      expect(await codeOf(call)).toEqual({ status: 409, code: "backups_not_configured" });
  });
});
