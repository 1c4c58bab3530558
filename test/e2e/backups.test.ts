// Backups with the compiled binary, against a local S3-compatible server the test starts (s3rver, in this
// process: test/s3-server.ts): snapshots on a schedule, pruned to SVC_BACKUP_KEEP; an upload while the
// storage is down, retried until it is back, as the metrics and health tell; `svc restore --from
// s3://…/latest` on a fresh box giving back every row; a corrupt snapshot refused; a snapshot taken under
// 32 concurrent writers holding every write acknowledged before it began, and each write whole; one of
// two svc sharing a database taking the schedule. And the keys, recognisable, in none of svc's output.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client, type Subprocess } from "bun";
import { compiledBinary } from "./support/binary.ts";
import { json } from "./support/svc.ts";
import { runProcess, spawnProcess } from "../support/cli.ts";
import { cameToHold } from "../support/wait.ts";
import { BUCKET, S3_ACCESS_KEY, S3_SECRET_KEY, type S3Server, startS3Server } from "../s3-server.ts";

const SECRET = "backups-test-secret-of-at-least-32-bytes";
const PASSWORD = "correct horse battery";
let workdir: string;
let binary: string;
let s3: S3Server;
/** Everything every svc process of this file wrote, to search for the keys at the end. */
const everything: string[] = [];

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), "svc-backups-e2e-"));
  binary = await compiledBinary();
  s3 = await startS3Server();
}, 120_000);

afterAll(async () => {
  await s3?.close();
  rmSync(workdir, { recursive: true, force: true });
});

interface Running {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  base: string;
  output: () => string;
}

const baseEnv = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  SVC_PORT: "0",
  SVC_HOST: "127.0.0.1",
  SVC_JWT_SECRET: SECRET,
  SVC_ENV: "test",
  SVC_PASSWORD_COST: "minimal",
  SVC_SIGNUP_CLIENT_MAX: "1000000",
  ...s3.env,
  ...extra,
});

/** svc serving from `dir`, once it says it listens; its output read as it comes. */
async function start(dir: string, env: Record<string, string> = {}): Promise<Running> {
  const proc = spawnProcess([binary], { cwd: dir, env: baseEnv(env) });
  let text = "";
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
  };
  void read(proc.stdout);
  void read(proc.stderr);
  const listening = await cameToHold(() => text.includes('"svc listening"') || proc.exitCode !== null, {
    timeoutMs: 10_000,
  });
  if (!listening || proc.exitCode !== null) throw new Error(`svc did not start: ${text}`);
  const line = JSON.parse(text.split("\n").find((l) => l.includes('"svc listening"'))!);
  const running = { proc, base: line.address, output: () => text };
  everything.push("");
  const slot = everything.length - 1;
  void proc.exited.then(() => (everything[slot] = text));
  return running;
}

async function stop(running: Running): Promise<number> {
  running.proc.kill("SIGTERM");
  return running.proc.exited;
}

/**
 * A command of the binary, run to its end in `dir`. Not spawnSync: the S3 server runs in this process, and
 * would not answer while it waits.
 */
async function svc(dir: string, args: string[], env: Record<string, string> = {}) {
  const run = await runProcess([binary, ...args], { cwd: dir, env: baseEnv(env), timeoutMs: 60_000 });
  everything.push(run.stdout, run.stderr);
  return { code: run.code, out: run.stdout, err: run.stderr };
}

async function signUp(base: string, username: string): Promise<number> {
  const reply = await json(base, "POST", "/svc-api/v1/users/create", {
    username,
    email: `${username}@example.com`,
    password: PASSWORD,
  });
  return reply.status;
}

async function login(base: string, username: string): Promise<string> {
  const reply = await json(base, "POST", "/svc-api/v1/auth/login", { username, password: PASSWORD });
  expect(reply.status).toBe(200);
  return reply.body.token;
}

/** An administrator on the svc serving from `dir`: signed up, promoted at the box, logged in. */
async function admin(running: Running, dir: string): Promise<string> {
  expect(await signUp(running.base, "root")).toBe(201);
  expect((await svc(dir, ["user", "promote", "root"])).code).toBe(0);
  try {
    return await login(running.base, "root");
  } catch (error) {
    // A refused connection means svc went away: what it wrote says why.
    throw new Error(`login failed (svc exit code ${running.proc.exitCode}): ${error}\n${running.output()}`);
  }
}

const bucket = () =>
  new S3Client({ endpoint: s3.endpoint, accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY, bucket: BUCKET });
const keysUnder = async (prefix: string) => ((await bucket().list({ prefix })).contents ?? []).map((o) => o.key).sort();
const metric = (text: string, name: string) =>
  Number(new RegExp(`^${name}\\{service="svc"\\} (\\S+)$`, "m").exec(text)?.[1]);
const metrics = async (base: string) => (await fetch(`${base}/svc/metrics`)).text();
const healthBackup = async (base: string) => (await json(base, "GET", "/svc/health")).body.backup;
const stored = (running: Running) =>
  running
    .output()
    .split("\n")
    .filter((l) => l.includes('"backup stored"'))
    .map((l) => JSON.parse(l));

function rows(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(
      ["users", "categories", "sessions", "audit_events"].map((t) => [
        t,
        db.query(`SELECT * FROM ${t} ORDER BY 1`).all(),
      ]),
    );
  } finally {
    db.close();
  }
}

describe("the binary's backups", () => {
  test("take a snapshot every SVC_BACKUP_EVERY into the bucket, keeping SVC_BACKUP_KEEP; health and metrics say ok", async () => {
    const dir = mkdtempSync(join(workdir, "scheduled-"));
    const running = await start(dir, {
      SVC_BACKUP_EVERY: "1s",
      SVC_BACKUP_KEEP: "3",
      SVC_BACKUP_TO: `s3://${BUCKET}/scheduled`,
    });
    expect(await cameToHold(() => stored(running).length >= 5, { timeoutMs: 15_000 })).toBe(true);
    const names = stored(running).map((line) => `scheduled/${line.snapshot}`);
    const kept = await keysUnder("scheduled/");
    expect(kept).toHaveLength(3);
    // The newest three stored; each run deleted the one beyond SVC_BACKUP_KEEP.
    const latest = stored(running).at(-1)!;
    expect(kept).toContain(`scheduled/${latest.snapshot}`);
    expect(kept.every((key) => names.includes(key))).toBe(true);
    expect(await healthBackup(running.base)).toEqual({ status: "ok", last_success_at: expect.stringMatching(/Z$/) });
    const text = await metrics(running.base);
    expect(metric(text, "svc_backup_last_success_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(metric(text, "svc_backup_failures_total")).toBe(0);
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("retry an upload while the storage is down and store it when it is back: failing, then ok", async () => {
    const dir = mkdtempSync(join(workdir, "retried-"));
    await s3.stop();
    let running: Running | undefined;
    try {
      running = await start(dir, { SVC_BACKUP_EVERY: "1s", SVC_BACKUP_TO: `s3://${BUCKET}/retried` });
      const base = running.base;
      expect(
        await cameToHold(async () => metric(await metrics(base), "svc_backup_failures_total") >= 2, {
          timeoutMs: 15_000,
        }),
      ).toBe(true);
      expect(await healthBackup(base)).toEqual({ status: "failing", last_success_at: null });
      const failures = running
        .output()
        .split("\n")
        .filter((l) => l.includes("backup failed"));
      expect(failures.length).toBeGreaterThanOrEqual(2);
      expect(JSON.parse(failures[0]!)).toMatchObject({
        level: "warn",
        to: `s3://${BUCKET}/retried/`,
        msg: expect.stringMatching(/^backup failed: ConnectionRefused/),
      });
    } finally {
      await s3.start();
    }
    const base = running.base;
    expect(await cameToHold(async () => (await healthBackup(base))?.status === "ok", { timeoutMs: 15_000 })).toBe(true);
    expect((await keysUnder("retried/")).length).toBeGreaterThanOrEqual(1);
    expect(metric(await metrics(base), "svc_backup_last_success_timestamp_seconds")).toBeGreaterThan(0);
    expect(await stop(running)).toBe(0);
  }, 40_000);

  test("svc restore --from s3://…/latest on a fresh box gives back every row, and svc serves it", async () => {
    const dir = mkdtempSync(join(workdir, "live-"));
    const env = { SVC_BACKUP_TO: `s3://${BUCKET}/restore` };
    const running = await start(dir, env);
    const token = await admin(running, dir);
    for (const name of ["ann", "bob", "cid", "dee"]) {
      expect(await signUp(running.base, name)).toBe(201);
      const own = await login(running.base, name);
      const made = await json(
        running.base,
        "POST",
        "/graphql",
        { query: `mutation { createCategory(input: { name: "${name}'s" }) { id } }` },
        own,
      );
      expect(made.body.errors).toBeUndefined();
    }
    const begun = await json(running.base, "POST", "/svc-api/v1/admin/backups", undefined, token);
    expect(begun.status).toBe(202);
    expect(
      await cameToHold(
        async () =>
          (await json(running.base, "GET", "/svc-api/v1/admin/backups", undefined, token)).body.status === "ok",
        { timeoutMs: 10_000 },
      ),
    ).toBe(true);
    const listed = (await json(running.base, "GET", "/svc-api/v1/admin/backups", undefined, token)).body;
    expect(listed.snapshots).toHaveLength(1);
    expect(await stop(running)).toBe(0);
    const before = rows(join(dir, "data", "svc.db"));
    expect([before.users!.length, before.categories!.length, before.sessions!.length]).toEqual([5, 4, 5]);

    const fresh = mkdtempSync(join(workdir, "fresh-"));
    const restored = await svc(fresh, ["restore", "--from", `s3://${BUCKET}/restore/latest`]);
    expect(restored).toMatchObject({ code: 0, err: "" });
    expect(restored.out).toContain(`from s3://${BUCKET}/restore/${listed.snapshots[0].name}`);
    expect(restored.out).toContain(`5 users, 4 categories, 5 sessions, ${before.audit_events!.length} audit events`);
    expect(rows(join(fresh, "data", "svc.db"))).toEqual(before);
    const again = await start(fresh, env);
    await login(again.base, "ann");
    expect(await stop(again)).toBe(0);

    // A corrupt newest snapshot of the same database is refused, and the box left as it was. (Named by a later svc,
    // so that it is the newest even within the same second.)
    const identity = /-([0-9a-f]{16})\.db\.gz$/.exec(listed.snapshots[0].name)![1]!;
    const corrupt = `svc-${new Date().toISOString().replace(/[-:]|\.\d+/g, "")}-9.9.9-${identity}.db.gz`;
    await bucket().write(`restore/${corrupt}`, Bun.gzipSync(new TextEncoder().encode("no database")));
    const empty = mkdtempSync(join(workdir, "empty-"));
    const refused = await svc(empty, ["restore", "--from", `s3://${BUCKET}/restore/latest`]);
    expect(refused.code).toBe(1);
    expect(refused.err).toStartWith(`svc restore: s3://svc-backups/restore/${corrupt} is not a sound svc database: `);
    expect(refused.err).toEndWith("; nothing was changed\n");
    expect(readdirSync(empty)).toEqual([]);
  }, 60_000);

  test("a snapshot taken under 32 concurrent writers holds every write acknowledged before it began, each one whole", async () => {
    const dir = mkdtempSync(join(workdir, "writers-"));
    const to = join(dir, "snapshots");
    const running = await start(dir, { SVC_BACKUP_TO: to });
    const token = await admin(running, dir);
    const acknowledged = new Set<string>();
    const attempted = new Set<string>();
    let writing = true;
    const writers = Array.from({ length: 32 }, async (_, w) => {
      for (let n = 0; writing; n++) {
        const name = `w${w}-${n}`;
        attempted.add(name);
        if ((await signUp(running.base, name)) === 201) acknowledged.add(name);
      }
    });
    expect(await cameToHold(() => acknowledged.size >= 300, { timeoutMs: 30_000 })).toBe(true);
    const beforeBegun = new Set(acknowledged);
    const begun = await json(running.base, "POST", "/svc-api/v1/admin/backups", undefined, token);
    expect(begun.status).toBe(202);
    const duringFrom = acknowledged.size;
    expect(
      await cameToHold(
        async () => !(await json(running.base, "GET", "/svc-api/v1/admin/backups", undefined, token)).body.running,
        { timeoutMs: 30_000 },
      ),
    ).toBe(true);
    const whileRunning = acknowledged.size - duringFrom;
    writing = false;
    await Promise.all(writers);
    const state = (await json(running.base, "GET", "/svc-api/v1/admin/backups", undefined, token)).body;
    expect(state.status).toBe("ok");
    expect(await stop(running)).toBe(0);

    const [name] = readdirSync(to);
    const plain = join(dir, "snapshot.db");
    await Bun.write(plain, Bun.gunzipSync(readFileSync(join(to, name!))));
    const db = new Database(plain, { readonly: true });
    expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    const users = new Map(
      db
        .query<{ id: string; username: string }, []>("SELECT id, username FROM users")
        .all()
        .map((u) => [u.username, u.id]),
    );
    const created = new Set(
      db
        .query<{ target_id: string }, []>("SELECT target_id FROM audit_events WHERE action = 'user.created'")
        .all()
        .map((e) => e.target_id),
    );
    db.close();
    // Every sign-up acknowledged before the backup was asked for is in it.
    const missing = [...beforeBegun].filter((name) => !users.has(name));
    expect(missing).toEqual([]);
    // Nothing that was never sent; and each sign-up whole: its account with its audit event, or neither.
    const writers_ = [...users.keys()].filter((name) => name !== "root");
    expect(writers_.filter((name) => !attempted.has(name))).toEqual([]);
    expect([...users.values()].filter((id) => !created.has(id))).toEqual([]);
    expect([...created].filter((id) => ![...users.values()].includes(id))).toEqual([]);
    // The writers went on while it ran (the snapshot is one moment, not a pause).
    expect(acknowledged.size).toBeGreaterThan(beforeBegun.size);
    console.log(
      `32 writers: ${beforeBegun.size} sign-ups before the backup was asked for, ${whileRunning} while it ran, ${users.size - 1} in the snapshot, ${acknowledged.size} in all`,
    );
  }, 90_000);

  test("of two svc sharing a database, one takes the schedule; the other takes over when it dies", async () => {
    const dir = mkdtempSync(join(workdir, "shared-"));
    const env = { SVC_BACKUP_EVERY: "1s", SVC_BACKUP_TO: join(dir, "snapshots") };
    const first = await start(dir, env);
    const second = await start(dir, env);
    expect(await cameToHold(() => stored(first).length >= 3, { timeoutMs: 15_000 })).toBe(true);
    expect(stored(second)).toEqual([]);
    expect(second.output()).toContain("scheduled backups are taken by another svc process sharing this database");
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    expect(await cameToHold(() => stored(second).length >= 2, { timeoutMs: 15_000 })).toBe(true);
    expect(second.output()).toContain("scheduled backups are taken by this process");
    expect(await stop(second)).toBe(0);
  }, 40_000);

  test("svc backup --now from cron beside svc serving, two databases sharing one folder: each keeps its own, and svc serving reports its own", async () => {
    const folder = join(workdir, "cron-snapshots");
    const [one, two] = [mkdtempSync(join(workdir, "cron-one-")), mkdtempSync(join(workdir, "cron-two-"))];
    const env = { SVC_BACKUP_TO: folder, SVC_BACKUP_KEEP: "1" };
    for (const dir of [one, two]) expect((await svc(dir, ["migrate"])).code).toBe(0);
    const identity = (dir: string) => {
      const db = new Database(join(dir, "data", "svc.db"), { readonly: true });
      try {
        return db.query<{ id: string }, []>("SELECT id FROM svc_database").get()!.id;
      } finally {
        db.close();
      }
    };
    expect(identity(one)).not.toBe(identity(two));
    const serving = await start(one, env);
    expect(await healthBackup(serving.base)).toEqual({ status: "pending", last_success_at: null });
    // As cron runs it, twice for each, alternating: SVC_BACKUP_KEEP=1 of each stays.
    for (const dir of [one, two, one, two]) expect((await svc(dir, ["backup", "--now"], env)).code).toBe(0);
    const names = readdirSync(folder).sort();
    expect(names).toHaveLength(2);
    for (const dir of [one, two])
      expect(names.filter((name) => name.endsWith(`-${identity(dir)}.db.gz`))).toHaveLength(1);
    const own = names.find((name) => name.includes(identity(one)))!;
    const taken = `${own.slice(4, 8)}-${own.slice(8, 10)}-${own.slice(10, 12)}T${own.slice(13, 15)}:${own.slice(15, 17)}:${own.slice(17, 19)}Z`;
    // The serving svc reads the folder again every minute; restarted, it reads it at once.
    expect(await stop(serving)).toBe(0);
    const again = await start(one, env);
    // It reads the listing once it listens.
    expect(
      await cameToHold(async () => (await healthBackup(again.base)).status !== "pending", { timeoutMs: 10_000 }),
    ).toBe(true);
    expect(await healthBackup(again.base)).toEqual({ status: "ok", last_success_at: taken });
    expect(metric(await metrics(again.base), "svc_backup_last_success_timestamp_seconds")).toBe(
      Date.parse(taken) / 1000,
    );
    expect(await stop(again)).toBe(0);
  }, 40_000);

  test("no line any svc wrote holds a key", () => {
    const text = everything.join("\n");
    expect(text.length).toBeGreaterThan(1000);
    expect(text).not.toContain(S3_SECRET_KEY);
    expect(text).not.toContain(S3_ACCESS_KEY);
  });
});
