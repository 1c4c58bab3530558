// Backups to S3-compatible storage, against a local s3rver the test starts (test/s3-server.ts): svc's
// snapshots listed, stored and deleted under their prefix only; an upload while the storage is down
// retried until it is back; `svc restore --from s3://…/latest` giving back every row; and the keys, set
// to recognisable values, in no line svc writes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "bun";
import { parseConfig } from "../src/config/index.ts";
import { s3Destination } from "../src/backup/s3.ts";
import { createBackups } from "../src/backup/service.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { ManualClock } from "./backup-clock.ts";
import { testApp } from "./helpers.ts";
import { BUCKET, S3_ACCESS_KEY, S3_SECRET_KEY, type S3Server, startS3Server } from "./s3-server.ts";
import { captureCli } from "./support/cli.ts";
import { failure } from "./support/failure.ts";

let s3: S3Server;
let dir: string;
let live: string;
let store: VersionedStore;
/** Every line svc wrote in this file's tests: log lines and commands' output alike. */
const written: string[] = [];

beforeAll(async () => {
  s3 = await startS3Server();
  dir = mkdtempSync(join(tmpdir(), "svc-backup-s3-"));
  live = join(dir, "live", "svc.db");
  store = await openSqliteStore(live);
  const app = await testApp({ on: store });
  for (const name of ["ann", "bob"]) {
    const { token } = await app.signUp(name);
    await app.graphql(`mutation { createCategory(input: { name: "${name}'s" }) { id } }`, { token });
  }
});

afterAll(async () => {
  await store.close();
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});

const settings = () => parseConfig({ SVC_BACKUP_TO: `s3://${BUCKET}/x`, ...s3.env }).backup.s3;
const client = () => new S3Client({ ...settings(), bucket: BUCKET });
const logger = {
  debug: (fields: object, message: string) => void written.push(JSON.stringify({ ...fields, message })),
  info: (fields: object | string, message?: string) => void written.push(JSON.stringify({ fields, message })),
  warn: (fields: object | string, message?: string) => void written.push(JSON.stringify({ fields, message })),
  error: (fields: object, message: string) => void written.push(JSON.stringify({ ...fields, message })),
};

async function cli(argv: string[], env: Record<string, string>) {
  const run = await captureCli(argv, env);
  written.push(run.out, run.err);
  return run;
}

function rows(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return ["users", "categories", "sessions", "audit_events"].map((table) =>
      db.query(`SELECT * FROM ${table} ORDER BY 1`).all(),
    );
  } finally {
    db.close();
  }
}

describe("an S3 destination", () => {
  test("lists, stores, reads and deletes svc's snapshots under its prefix, and nothing else", async () => {
    const bucket = client();
    for (const key of [
      "box-1/notes.txt",
      "box-1/sub/svc-20260101T000000Z-0.2.0.db.gz",
      "box-2/svc-20260101T000000Z-0.2.0.db.gz",
    ])
      await bucket.write(key, "not ours");
    const destination = s3Destination(BUCKET, "box-1/", settings());
    expect(destination.shown).toBe(`s3://${BUCKET}/box-1/`);
    const file = join(dir, "snapshot.gz");
    writeFileSync(file, Bun.gzipSync(new TextEncoder().encode("a snapshot")));
    await destination.put("svc-20261126T100000Z-0.2.0-00000000000000a1.db.gz", file);
    await destination.put("svc-20261126T090000Z-0.1.9.db.gz", file);
    expect(await destination.list()).toEqual([
      {
        name: "svc-20261126T090000Z-0.1.9.db.gz",
        size: expect.any(Number),
        takenAt: "2026-11-26T09:00:00Z",
        version: "0.1.9",
        database: null,
      },
      {
        name: "svc-20261126T100000Z-0.2.0-00000000000000a1.db.gz",
        size: Bun.file(file).size,
        takenAt: "2026-11-26T10:00:00Z",
        version: "0.2.0",
        database: "00000000000000a1",
      },
    ]);
    const read = await new Response(
      await destination.read("svc-20261126T100000Z-0.2.0-00000000000000a1.db.gz"),
    ).arrayBuffer();
    expect(Bun.gunzipSync(new Uint8Array(read))).toEqual(new TextEncoder().encode("a snapshot"));
    expect(await failure(destination.read("svc-20261126T110000Z-0.2.0.db.gz"))).toMatchObject({
      message: expect.stringContaining("no snapshot named"),
    });
    await destination.remove("svc-20261126T090000Z-0.1.9.db.gz");
    expect((await destination.list()).map((s) => s.name)).toEqual([
      "svc-20261126T100000Z-0.2.0-00000000000000a1.db.gz",
    ]);
    const keys = (await bucket.list({})).contents!.map((o) => o.key);
    expect(keys).toContain("box-1/notes.txt");
    expect(keys).toContain("box-1/sub/svc-20260101T000000Z-0.2.0.db.gz");
    expect(keys).toContain("box-2/svc-20260101T000000Z-0.2.0.db.gz");
  });
});

describe("backups to S3", () => {
  test("an upload while the storage is down fails, is reported, and is retried until it is back", async () => {
    const clock = new ManualClock();
    const backups = createBackups({
      databasePath: live,
      destination: s3Destination(BUCKET, "retried/", settings()),
      everySeconds: 3600,
      keep: 14,
      s3: settings(),
      version: "0.2.0",
      logger,
      clock,
    });
    await s3.stop();
    try {
      await backups.start();
      clock.fireNext();
      await backups.idle();
      clock.fireNext();
      await backups.idle();
      expect(backups.state()).toMatchObject({ status: "failing", failures: 2, lastSuccessAt: null });
      expect(backups.state().lastFailure!.reason).toStartWith("ConnectionRefused");
      // Which storage, and which bucket, an operator with several would otherwise have to guess.
      expect(backups.state().lastFailure!.reason).toContain(`${s3.endpoint} s3://${BUCKET}/retried/`);
    } finally {
      await s3.start();
    }
    clock.fireNext();
    await backups.idle();
    expect(backups.state()).toMatchObject({ status: "ok", failures: 2 });
    expect((await backups.list()).map((s) => s.name)).toEqual([
      expect.stringMatching(/^svc-20261126T120000Z-0\.2\.0-[0-9a-f]{16}\.db\.gz$/),
    ]);
    expect(written.filter((line) => line.includes("backup failed: ConnectionRefused"))).toHaveLength(2);
    await backups.stop();
  });

  test("svc restore --from s3://…/latest on a fresh box gives back every row", async () => {
    const env = { SVC_DATABASE_URL: `sqlite:${live}`, SVC_BACKUP_TO: `s3://${BUCKET}/restored`, ...s3.env };
    expect((await cli(["backup", "--now"], env)).code).toBe(0);
    const listed = await cli(["backup", "--list"], env);
    expect(listed.out.split("\n")[1]).toMatch(/^svc-\d{8}T\d{6}Z-[\d.]+-[0-9a-f]{16}\.db\.gz\t\d+\t/);
    const fresh = join(mkdtempSync(join(dir, "box-")), "data", "svc.db");
    const restored = await cli(["restore", "--from", `s3://${BUCKET}/restored/latest`], {
      SVC_DATABASE_URL: `sqlite:${fresh}`,
      ...s3.env,
    });
    expect(restored).toMatchObject({ code: 0, err: "" });
    expect(restored.out).toContain(`from s3://${BUCKET}/restored/svc-`);
    expect(restored.out).toContain("2 users, 2 categories, 2 sessions,");
    expect(rows(fresh)).toEqual(rows(live));
  });

  test("a refusal by the storage says what it refused, without the keys", async () => {
    const env = { SVC_DATABASE_URL: `sqlite:${live}`, SVC_BACKUP_TO: `s3://${BUCKET}/refused`, ...s3.env };
    const wrongKey = "AKIASVCWRONGKEYID0042";
    const wrong = await cli(["backup", "--now"], { ...env, S3_ACCESS_KEY_ID: wrongKey });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toStartWith("svc backup: InvalidAccessKeyId: ");
    expect(wrong.err).not.toContain(wrongKey);
    const unknown = await cli(["backup", "--list"], { ...env, SVC_BACKUP_TO: "s3://no-such-bucket/x" });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toStartWith("svc backup: NoSuchBucket: ");
    expect(unknown.err).toContain(`${s3.endpoint} s3://no-such-bucket/x/`);
  });

  test("no line svc wrote holds a key", () => {
    expect(written.length).toBeGreaterThan(5);
    for (const line of written) {
      expect(line).not.toContain(S3_SECRET_KEY);
      expect(line).not.toContain(S3_ACCESS_KEY);
    }
  });
});
