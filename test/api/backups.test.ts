// /svc-api/v1/admin/backups, and what health and the metrics tell of the backups. The snapshots here are
// stand-ins the test releases when it chooses (the real ones, and storage, are test/backup-*.test.ts's):
// the routes are the same whichever database the app runs on.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Destination } from "../../src/backup/destination.ts";
import { folderDestination } from "../../src/backup/folder.ts";
import { type Backups, createBackups } from "../../src/backup/service.ts";
import type { SnapshotRequest, TakenSnapshot } from "../../src/backup/snapshot.ts";
import { ManualClock } from "../backup-clock.ts";
import { expectProblem, promote, testApp, type ConfigOverrides } from "../helpers.ts";

const PATH = "/svc-api/v1/admin/backups";
const dir = mkdtempSync(join(tmpdir(), "svc-backup-api-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** The database's identity, as its snapshots' names carry it (the snapshots here are stand-ins). */
const IDENTITY = "00000000000000d1";

/** Backups whose snapshots wait for `release()`; their destination fails while `down`. */
function heldBackups(everySeconds: number | null = null) {
  const folder = mkdtempSync(join(dir, "to-"));
  const inner = folderDestination(folder);
  // Each release lets one snapshot finish: the one waiting, or the next to begin.
  const waiting: (() => void)[] = [];
  let releasedAhead = 0;
  const control = {
    down: false,
    release: () => (waiting.length > 0 ? waiting.shift()!() : releasedAhead++),
  };
  const destination: Destination = {
    ...inner,
    async put(name, path) {
      if (control.down) throw new Error("connect ECONNREFUSED 127.0.0.1:9000");
      await inner.put(name, path);
    },
    async list() {
      if (control.down) throw new Error("connect ECONNREFUSED 127.0.0.1:9000");
      return inner.list();
    },
  };
  const snapshot = (request: SnapshotRequest) => {
    const released = new Promise<void>((resolve) =>
      releasedAhead > 0 ? (releasedAhead--, resolve()) : waiting.push(resolve),
    );
    const done = released.then((): TakenSnapshot => {
      const path = join(request.scratch, request.name);
      writeFileSync(path, Bun.gzipSync(new TextEncoder().encode("a snapshot")));
      const counts = { users: 1, categories: 0, sessions: 1, auditEvents: 2 };
      return { name: request.name, path, size: Bun.file(path).size, counts };
    });
    return { done, stop() {} };
  };
  const clock = new ManualClock();
  const backups = createBackups({
    databasePath: join(mkdtempSync(join(dir, "db-")), "svc.db"),
    destination,
    everySeconds,
    keep: 14,
    s3: {},
    version: "0.2.0",
    logger: quiet,
    snapshot,
    clock,
    identity: () => IDENTITY,
  });
  return { backups, control, folder, clock };
}

async function appWith(backups?: Backups, config: ConfigOverrides = {}) {
  const app = await testApp({ backups, config });
  const root = await app.signUp("root");
  await promote(app.store, root.user.id);
  return { ...app, root };
}

describe("admin/backups", () => {
  test("administrators only: 401 without a token, 403 with a user's", async () => {
    const app = await appWith(heldBackups().backups);
    const ann = await app.signUp("ann");
    for (const method of ["GET", "POST"]) {
      expectProblem(await app.call(method, PATH), 401, "unauthorized");
      expectProblem(await app.call(method, PATH, { token: ann.token }), 403, "forbidden");
    }
  });

  test("without SVC_BACKUP_TO, 409 backups_not_configured, saying what to set", async () => {
    const app = await appWith();
    for (const method of ["GET", "POST"]) {
      const reply = await app.call(method, PATH, { token: app.root.token });
      expectProblem(reply, 409, "backups_not_configured");
      expect(reply.body.detail).toContain(app.store.kind === "sqlite" ? "SVC_BACKUP_TO" : "pg_dump");
    }
  });

  test("GET: the schedule, the state and the snapshots, newest first", async () => {
    const { backups, folder } = heldBackups(21600);
    for (const name of ["svc-20261120T060000Z-0.1.9.db.gz", "svc-20261120T120000Z-0.2.0.db.gz"])
      writeFileSync(join(folder, name), "12345");
    const app = await appWith(backups);
    const reply = await app.call("GET", PATH, { token: app.root.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      schedule: { every: "6h", to: folder, keep: 14 },
      status: "pending",
      running: false,
      scheduled_here: false,
      next_run_at: null,
      last_success_at: null,
      last_failure: null,
      failures: 0,
      snapshots: [
        { name: "svc-20261120T120000Z-0.2.0.db.gz", size: 5, created_at: "2026-11-20T12:00:00Z", version: "0.2.0" },
        { name: "svc-20261120T060000Z-0.1.9.db.gz", size: 5, created_at: "2026-11-20T06:00:00Z", version: "0.1.9" },
      ],
      listing_error: null,
    });
  });

  test("POST: 202, one run at a time (409 backup_in_progress), audited as backup.requested; GET shows how it ended", async () => {
    const { backups, control, folder } = heldBackups();
    const app = await appWith(backups);
    const begun = await app.call("POST", PATH, { token: app.root.token });
    expect(begun.status).toBe(202);
    expect(begun.headers.get("location")).toBe(PATH);
    expect(begun.body).toMatchObject({ schedule: { every: null, to: folder }, running: true, status: "pending" });
    expectProblem(await app.call("POST", PATH, { token: app.root.token }), 409, "backup_in_progress");
    control.release();
    await backups.idle();
    const after = (await app.call("GET", PATH, { token: app.root.token })).body;
    expect(after).toMatchObject({ status: "ok", running: false, failures: 0, last_failure: null });
    expect(after.snapshots).toEqual([
      {
        name: expect.stringMatching(/^svc-\d{8}T\d{6}Z-0\.2\.0-00000000000000d1\.db\.gz$/),
        size: expect.any(Number),
        created_at: after.last_success_at,
        version: "0.2.0",
      },
    ]);
    const audit = (await app.call("GET", "/svc-api/v1/admin/audit?action=backup.requested", { token: app.root.token }))
      .body;
    expect(audit).toMatchObject([
      { action: "backup.requested", actor_id: app.root.user.id, outcome: "success", detail: { to: folder } },
    ]);
  });

  test("a failure shows as failing, with its reason; storage that does not answer still leaves the state to see", async () => {
    const { backups, control } = heldBackups();
    const app = await appWith(backups);
    control.down = true;
    expect((await app.call("POST", PATH, { token: app.root.token })).status).toBe(202);
    control.release();
    await backups.idle();
    const reply = await app.call("GET", PATH, { token: app.root.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: "failing",
      failures: 1,
      last_failure: { at: expect.any(String), reason: "connect ECONNREFUSED 127.0.0.1:9000" },
      snapshots: null,
      listing_error: "connect ECONNREFUSED 127.0.0.1:9000",
    });
    expect(reply.body.next_run_at).not.toBeNull();
  });
});

describe("health and metrics", () => {
  const metric = (text: string, name: string) => new RegExp(`^${name}\\{service="svc"\\} (\\S+)$`, "m").exec(text)?.[1];
  test("the metrics carry the last success and the failures, once there are backups", async () => {
    const without = await appWith();
    const none = (await without.call("GET", "/svc/metrics")).text;
    expect(none).not.toContain("svc_backup_");
    const { backups, control } = heldBackups();
    const app = await appWith(backups);
    const before = (await app.call("GET", "/svc/metrics")).text;
    expect([
      metric(before, "svc_backup_last_success_timestamp_seconds"),
      metric(before, "svc_backup_failures_total"),
    ]).toEqual(["0", "0"]);
    control.down = true;
    backups.runNow();
    control.release();
    await backups.idle();
    expect(metric((await app.call("GET", "/svc/metrics")).text, "svc_backup_failures_total")).toBe("1");
    control.down = false;
    backups.runNow();
    control.release();
    await backups.idle();
    const after = (await app.call("GET", "/svc/metrics")).text;
    expect(Number(metric(after, "svc_backup_last_success_timestamp_seconds"))).toBe(
      Date.parse(backups.state().lastSuccessAt!) / 1000,
    );
  });

  test("a snapshot stored by another process (svc backup --now from cron) shows at the next re-read; one dated in the future never", async () => {
    const { backups, folder, clock } = heldBackups();
    await backups.start();
    const app = await appWith(backups);
    const taken = clock.now() - 60_000;
    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d+/g, "");
    writeFileSync(join(folder, `svc-${stamp(taken)}-0.2.0-${IDENTITY}.db.gz`), "12345");
    writeFileSync(join(folder, `svc-${stamp(taken + 86_400_000)}-0.2.0-${IDENTITY}.db.gz`), "12345");
    expect((await app.call("GET", "/svc/health")).body.backup).toEqual({ status: "pending", last_success_at: null });
    clock.fireNext();
    await backups.idle();
    const iso = new Date(taken).toISOString().replace(".000Z", "Z");
    expect((await app.call("GET", "/svc/health")).body.backup).toEqual({ status: "ok", last_success_at: iso });
    const metrics = (await app.call("GET", "/svc/metrics")).text;
    expect(Number(metric(metrics, "svc_backup_last_success_timestamp_seconds"))).toBe(taken / 1000);
    expect((await app.call("GET", PATH, { token: app.root.token })).body).toMatchObject({
      status: "ok",
      last_success_at: iso,
    });
    await backups.stop();
  });

  test("health's details tell how backups fare; a stranger to a production svc is not told", async () => {
    const { backups, control } = heldBackups();
    const app = await appWith(backups);
    expect((await app.call("GET", "/svc/health")).body.backup).toEqual({ status: "pending", last_success_at: null });
    control.down = true;
    backups.runNow();
    control.release();
    await backups.idle();
    expect((await app.call("GET", "/svc/health")).body.backup).toEqual({ status: "failing", last_success_at: null });
    control.down = false;
    backups.runNow();
    control.release();
    await backups.idle();
    expect((await app.call("GET", "/svc/health")).body.backup).toEqual({
      status: "ok",
      last_success_at: backups.state().lastSuccessAt,
    });
    const production = await appWith(heldBackups().backups, { env: "production" });
    const brief = await production.call("GET", "/svc/health");
    expect(brief.status).toBe(200);
    expect(brief.body.backup).toBeUndefined();
  });
});
