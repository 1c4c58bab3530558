// The schedule of a serving svc's backups (src/backup/service.ts), on a clock the test moves: when runs
// come, what SVC_BACKUP_KEEP leaves, how a failed upload is retried and reported, and which of two
// processes sharing a database takes the schedule. Snapshots are real (a worker thread, VACUUM INTO).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Destination } from "../src/backup/destination.ts";
import { folderDestination } from "../src/backup/folder.ts";
import { snapshotName } from "../src/backup/names.ts";
import { type Backups, type BackupsDeps, createBackups } from "../src/backup/service.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { ManualClock } from "./backup-clock.ts";
import { Database } from "bun:sqlite";

const HOUR = 3600_000;

let dir: string;
let databasePath: string;
let store: VersionedStore;
let clock: ManualClock;
let lines: { level: string; fields: object; message: string }[];
const made: Backups[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-backup-schedule-"));
  databasePath = join(dir, "svc.db");
  store = await openSqliteStore(databasePath);
  clock = new ManualClock();
  lines = [];
});

afterEach(async () => {
  for (const backups of made.splice(0)) await backups.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const logger = {
  debug: (fields: object, message: string) => lines.push({ level: "debug", fields, message }),
  info: (fields: object | string, message?: string) =>
    lines.push({ level: "info", fields: typeof fields === "string" ? {} : fields, message: message ?? String(fields) }),
  warn: (fields: object | string, message?: string) =>
    lines.push({ level: "warn", fields: typeof fields === "string" ? {} : fields, message: message ?? String(fields) }),
  error: (fields: object, message: string) => lines.push({ level: "error", fields, message }),
};

/** A folder destination whose uploads fail while `down` is true, as storage that does not answer. */
function flaky(folder: string): Destination & { down: boolean; puts: string[] } {
  const inner = folderDestination(folder);
  const flakyOne = {
    ...inner,
    down: false,
    puts: [] as string[],
    async put(name: string, path: string) {
      flakyOne.puts.push(name);
      if (flakyOne.down) throw new Error("connect ECONNREFUSED 127.0.0.1:9000");
      await inner.put(name, path);
    },
  };
  return flakyOne;
}

function backups(overrides: Partial<BackupsDeps> = {}): Backups {
  const made_ = createBackups({
    databasePath,
    destination: folderDestination(join(dir, "out")),
    everySeconds: 3600,
    keep: 3,
    s3: {},
    version: "0.2.0",
    logger,
    clock,
    // The listing's re-reads have tests of their own (below); here, only the runs' timers are set.
    rereadMs: null,
    ...overrides,
  });
  made.push(made_);
  return made_;
}

/** Fires the next timer and waits for the run it began. */
async function fire(of: Backups): Promise<void> {
  clock.fireNext();
  await of.idle();
}

const stored = () =>
  readdirSync(join(dir, "out"))
    .filter((name) => !name.startsWith("."))
    .sort();
const scratch = () => readdirSync(dir).filter((name) => name.includes(".backup-") && !name.endsWith("-lock"));
const at = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
/** This database's identity, which its snapshots' names carry. */
const identity = () => {
  const db = new Database(databasePath, { readonly: true });
  try {
    return db.query<{ id: string }, []>("SELECT id FROM svc_database").get()!.id;
  } finally {
    db.close();
  }
};

describe("the backup schedule", () => {
  test("takes a snapshot at start when there is none, then one every period, keeping the newest SVC_BACKUP_KEEP", async () => {
    const start = clock.now();
    const b = backups();
    await b.start();
    expect(b.state()).toMatchObject({
      status: "pending",
      scheduledHere: true,
      nextRunAt: new Date(start).toISOString(),
    });
    for (let run = 0; run < 5; run++) await fire(b);
    const names = [2, 3, 4].map((h) => snapshotName(new Date(start + h * HOUR), "0.2.0", identity()));
    expect(stored()).toEqual(names);
    expect(b.state()).toMatchObject({
      status: "ok",
      lastSuccessAt: at(start + 4 * HOUR),
      failures: 0,
      running: false,
      nextRunAt: new Date(start + 5 * HOUR).toISOString(),
    });
    expect(lines.filter((l) => l.message === "backup stored")).toHaveLength(5);
    // Nothing of the runs is left beside the database.
    expect(scratch()).toEqual([]);
  });

  test("counts the period from the newest snapshot there, which is also the last success it reports", async () => {
    const taken = clock.now() - 20 * 60_000;
    mkdirSync(join(dir, "out"));
    writeFileSync(join(dir, "out", snapshotName(new Date(taken), "0.1.9", identity())), "old");
    const b = backups();
    await b.start();
    expect(b.state()).toMatchObject({ lastSuccessAt: at(taken), nextRunAt: new Date(taken + HOUR).toISOString() });
  });

  test("leaves alone every file it did not name, however many it keeps", async () => {
    mkdirSync(join(dir, "out"));
    for (const name of ["notes.txt", "svc-backup.db.gz", "svc-20200101T000000Z-0.1.0.db"])
      writeFileSync(join(dir, "out", name), "x");
    const b = backups({ keep: 1 });
    await b.start();
    for (let run = 0; run < 3; run++) await fire(b);
    expect(stored()).toEqual(
      [
        snapshotName(new Date(clock.now()), "0.2.0", identity()),
        "notes.txt",
        "svc-20200101T000000Z-0.1.0.db",
        "svc-backup.db.gz",
      ].sort(),
    );
  });

  test("retries a failed upload after 5 s, 30 s, 2 min and 10 min, never past the next run, and stores the same snapshot once it can", async () => {
    const destination = flaky(join(dir, "out"));
    destination.down = true;
    const b = backups({ destination });
    const start = clock.now();
    await b.start();
    await fire(b);
    const waits: number[] = [];
    for (let failure = 1; failure <= 6; failure++) {
      expect(b.state()).toMatchObject({ status: "failing", failures: failure, lastSuccessAt: null });
      waits.push(clock.due()! - clock.now());
      await fire(b);
    }
    // 5 s + 30 s + 2 min + 10 min + 10 min + 10 min = 32m35s: the seventh wait would pass the next run at 1 h.
    expect(waits).toEqual([5_000, 30_000, 120_000, 600_000, 600_000, 600_000]);
    expect(b.state().failures).toBe(7);
    expect(clock.due()).toBe(start + 32 * 60_000 + 35_000 + 600_000);
    destination.down = false;
    await fire(b);
    // One snapshot, taken at the first attempt, tried eight times.
    const first = snapshotName(new Date(start), "0.2.0", identity());
    expect(new Set(destination.puts)).toEqual(new Set([first]));
    expect(destination.puts).toHaveLength(8);
    expect(stored()).toEqual([first]);
    expect(b.state()).toMatchObject({
      status: "ok",
      lastSuccessAt: at(start),
      failures: 7,
      nextRunAt: new Date(start + HOUR).toISOString(),
    });
    expect(b.state().lastFailure?.reason).toBe("connect ECONNREFUSED 127.0.0.1:9000");
    const warnings = lines.filter((l) => l.level === "warn");
    expect(warnings).toHaveLength(7);
    expect(warnings[0]!.message).toBe("backup failed: connect ECONNREFUSED 127.0.0.1:9000");
    expect(scratch()).toEqual([]);
  });

  test("a scheduled run replaces a snapshot still waiting for its retry with a new one", async () => {
    const destination = flaky(join(dir, "out"));
    destination.down = true;
    const b = backups({ destination, everySeconds: 60 });
    const start = clock.now();
    await b.start();
    // At 0 s, then the retries at 5 s and 35 s; the next, 2 min later, would pass the run at 60 s, which comes instead.
    for (let attempt = 0; attempt < 3; attempt++) await fire(b);
    expect(clock.due()).toBe(start + 60_000);
    destination.down = false;
    await fire(b);
    expect(stored()).toEqual([snapshotName(new Date(start + 60_000), "0.2.0", identity())]);
    expect(scratch()).toEqual([]);
  });

  test("a run asked for retries along the same waits, then stops, reported", async () => {
    const destination = flaky(join(dir, "out"));
    destination.down = true;
    const b = backups({ destination, everySeconds: null });
    await b.start();
    expect(b.state()).toMatchObject({ scheduledHere: null, nextRunAt: null });
    expect(b.runNow()).toBe("started");
    await b.idle();
    for (let retry = 0; retry < 4; retry++) await fire(b);
    expect(b.state()).toMatchObject({ status: "failing", failures: 5, nextRunAt: null });
    expect(clock.due()).toBeNull();
  });

  test("one run at a time: asked again while it runs, it says so", async () => {
    const b = backups({ everySeconds: null });
    expect(b.runNow()).toBe("started");
    expect(b.runNow()).toBe("running");
    expect(b.state().running).toBe(true);
    await b.idle();
    expect(b.state()).toMatchObject({ status: "ok", running: false });
    expect(stored()).toHaveLength(1);
  });

  test("of two processes sharing the database, one takes the schedule; the other takes over when it stops", async () => {
    const first = backups();
    const second = backups();
    await first.start();
    await second.start();
    expect([first.state().scheduledHere, second.state().scheduledHere]).toEqual([true, false]);
    // Both timers are due now: the second's run is not its to take.
    await fire(first);
    await fire(second);
    expect(stored()).toHaveLength(1);
    expect(second.state()).toMatchObject({ status: "pending", scheduledHere: false });
    await first.stop();
    clock.pass(HOUR);
    await fire(second);
    expect(second.state()).toMatchObject({ status: "ok", scheduledHere: true });
    expect(stored()).toHaveLength(2);
    expect(lines.map((l) => l.message)).toContain(
      "scheduled backups are taken by another svc process sharing this database",
    );
  });

  test("clears what a dead process's run left beside the database when it takes the schedule", async () => {
    const leftover = join(dir, ".svc.db.backup-abc123");
    mkdirSync(leftover);
    writeFileSync(join(leftover, "svc-20260101T000000Z-0.2.0.db"), "half a snapshot");
    await backups().start();
    expect(scratch()).toEqual([]);
  });
});

describe("what the backups report as the last success", () => {
  const place = (name: string) => {
    mkdirSync(join(dir, "out"), { recursive: true });
    writeFileSync(join(dir, "out", name), "x");
  };

  test("a snapshot dated in the future is no success: not reported, not waited for, not kept in place of one, and named in a warning", async () => {
    const now = clock.now();
    const future = snapshotName(new Date(now + 48 * HOUR), "0.2.0", identity());
    const real = snapshotName(new Date(now - 20 * 60_000), "0.2.0", identity());
    place(future);
    place(real);
    const b = backups({ keep: 1 });
    await b.start();
    expect(b.state()).toMatchObject({
      status: "ok",
      lastSuccessAt: at(now - 20 * 60_000),
      nextRunAt: new Date(now + 40 * 60_000).toISOString(),
    });
    const warned = lines.filter((l) => l.level === "warn" && l.message.includes(future));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.message).toContain("dated in the future");
    await fire(b);
    // SVC_BACKUP_KEEP=1 counts the real ones: the new one stays, the older goes; the future one is left for a person.
    expect(stored()).toEqual([snapshotName(new Date(now + 40 * 60_000), "0.2.0", identity()), future].sort());
    expect(b.state()).toMatchObject({ status: "ok", lastSuccessAt: at(now + 40 * 60_000) });
    // Said once, not at every look.
    expect(lines.filter((l) => l.level === "warn" && l.message.includes(future))).toHaveLength(1);
  });

  test("a snapshot stored by another process (svc backup --now from cron) shows at the next re-read, with no schedule here", async () => {
    const b = backups({ everySeconds: null, rereadMs: 60_000 });
    await b.start();
    expect(b.state()).toMatchObject({ status: "pending", lastSuccessAt: null });
    const taken = clock.now() + 30_000;
    clock.pass(30_000);
    place(snapshotName(new Date(taken), "0.2.0", identity()));
    // Another database's, newer, at the same destination: not this one's success.
    place(snapshotName(new Date(taken + 10_000), "0.2.0", "00000000000000aa"));
    expect(clock.due()).toBe(taken + 30_000);
    await fire(b);
    expect(b.state()).toMatchObject({ status: "ok", lastSuccessAt: at(taken) });
    // And on, once a period.
    expect(clock.due()).toBe(taken + 90_000);
  });
});
