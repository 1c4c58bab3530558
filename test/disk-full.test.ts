// A full volume under the SQLite file (a small tmpfs filled to the brim): writes are 503 storage_full
// (GraphQL STORAGE_FULL) and change nothing (a login stores a session, so it is one), reads go on,
// health says so, and all heals
// once space returns. Mounting needs root, as CI has; elsewhere the test is skipped.
import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditEvent } from "../src/audit/model.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { FULL_REMEMBERED_MS } from "../src/db/storage.ts";
import { expectProblem, testApp } from "./helpers.ts";
import { newUser } from "./store/conformance.ts";
import { captureCli, runProcessSync, SOURCE_SVC } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-full-"));
const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir]).exitCode === 0;
if (!mounted && process.env.CI === "true")
  throw new Error(`CI must be able to mount a tmpfs at ${dir} (it runs as root)`);
// A test that moved the clock puts it back.
afterEach(() => setSystemTime());
afterAll(() => {
  if (mounted) Bun.spawnSync(["umount", "-l", dir]);
  rmSync(dir, { recursive: true, force: true });
});

/** Writes to `path` until the volume refuses another byte. */
function fill(path: string): void {
  const fd = openSync(path, "w");
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 512, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch {
        // ENOSPC: on with smaller pieces.
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!mounted)("SQLite on a full volume", () => {
  let app: Awaited<ReturnType<typeof testApp>>;
  let token: string;
  let refresh: string;
  const filler = join(dir, "filler");
  /**
   * A sound svc database whose log holds rows. Its index (-shm) is gone each time the volume is
   * starved (starve()), so whoever opens it next must write a new one: on a full volume that fails
   * with SQLite's "disk I/O error", which svc took for damage.
   */
  const kept = join(dir, "kept.db");
  let keptStore: ReturnType<typeof openSqliteStore>;
  let fillers = 0;
  function starve(): void {
    rmSync(`${kept}-shm`, { force: true });
    fill(join(dir, `filler-${++fillers}`));
  }
  beforeAll(async () => {
    keptStore = openSqliteStore(kept);
    for (let i = 0; i < 50; i++) await keptStore.users.create(newUser(`kim${i}`));
    app = await testApp({ on: openSqliteStore(join(dir, "svc.db")) });
    ({ token, refresh } = await app.signUp("ann", "correct horse battery"));
    await app.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token });
    fill(filler);
  });
  afterAll(async () => {
    await app?.store.close();
    await keptStore?.close();
  });

  test("writes are 503 storage_full, REST and GraphQL, and change nothing", async () => {
    const before = await app.store.counts();
    const signUp = await app.call("POST", "/svc-api/v1/users/create", {
      body: { username: "bob", email: "bob@example.com", password: "correct horse battery" },
    });
    expectProblem(signUp, 503, "storage_full");
    const rename = await app.call("PUT", "/svc-api/v1/users/", { token, body: { username: "anna" } });
    expectProblem(rename, 503, "storage_full");
    const create = await app.graphql('mutation { createCategory(input: { name: "Films" }) { id } }', { token });
    expect(create.body.errors[0].extensions.code).toBe("STORAGE_FULL");
    expect(await app.store.counts()).toEqual(before);
    expect((await app.store.users.findByLogin("ann"))?.username).toBe("ann");
  });

  test("transactions asked for together, which commit as one group, are each 503 storage_full and change nothing", async () => {
    const before = await app.store.counts();
    const signUps = await Promise.all(
      ["bob", "cyd", "dee"].map((username) =>
        app.call("POST", "/svc-api/v1/users/create", {
          body: { username, email: `${username}@example.com`, password: "correct horse battery" },
        }),
      ),
    );
    for (const signUp of signUps) expectProblem(signUp, 503, "storage_full");
    // One group for certain: asked for in one turn. The second's clash is with the first's row, which the full
    // disk never let be: it is storage_full too, not email_taken.
    const created = auditEvent("user.created", { origin: { address: "192.0.2.1", requestId: "r" } });
    const outcomes = await Promise.allSettled([
      app.store.users.create(newUser("eve"), created),
      app.store.users.create(newUser("eve2", { email: "eve@example.com" }), created),
    ]);
    expect(outcomes.map((o) => (o.status === "rejected" ? (o.reason as { code?: string }).code : "ok"))).toEqual([
      "storage_full",
      "storage_full",
    ]);
    expect(await app.store.counts()).toEqual(before);
  });

  test("reads go on with the tokens out there; a login or refresh, which must store its session, is 503 storage_full; a wrong password is still refused", async () => {
    expect((await app.call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
    expect((await app.graphql("{ categories { name } }", { token })).body).toEqual({
      data: { categories: [{ name: "Books" }] },
    });
    const sessions = await app.call("GET", "/svc-api/v1/auth/sessions", { token });
    expect(sessions.body).toHaveLength(1);
    const login = await app.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: "correct horse battery" },
    });
    expectProblem(login, 503, "storage_full");
    expectProblem(
      await app.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } }),
      503,
      "storage_full",
    );
    expect((await app.call("GET", "/svc-api/v1/auth/sessions", { token })).body).toEqual(sessions.body);
    expectProblem(
      await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: "wrong" } }),
      401,
      "invalid_credentials",
    );
  });

  /** The one line for a database on the full volume: the disk by its path and free bytes, no restore. */
  const fullDisk = new RegExp(
    `the disk holding ${dir.replaceAll(".", "\\.")} is full \\(\\d+ bytes free\\): free space there, then try again \\(no sign of damage: do not restore the database\\)$`,
  );

  test("starting another svc on the full volume fails with one line saying so", () => {
    const serve = runProcessSync(SOURCE_SVC, {
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_DATABASE_URL: `sqlite:${join(dir, "other.db")}` },
    });
    expect(serve.code).toBe(1);
    const lines = serve.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(`svc: cannot open the database sqlite:${join(dir, "other.db")}: `);
    expect(lines[0]).toMatch(fullDisk);
  });

  /** `svc <argv>` as a process on the kept database (in this one, SQLite would share the open store's index). */
  function svc(argv: string[]) {
    const run = runProcessSync([...SOURCE_SVC, ...argv], {
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_DATABASE_URL: `sqlite:${kept}` },
      // A serve that does not refuse would serve on: stopped, for the test to fail rather than hang.
      timeoutMs: 10_000,
    });
    return { code: run.code, lines: run.stderr.trim().split("\n") };
  }

  test("restarting svc, svc check or a command on a sound database on the full volume name the full disk, never damage or a restore (#53 item 1)", () => {
    const before = Bun.file(kept).size;
    for (const [argv, prefix] of [
      [[], `svc: cannot open the database sqlite:${kept}: `],
      [["check"], `svc check: sqlite:${kept}: `],
      [["user", "list"], "svc user: "],
    ] as const) {
      starve();
      const { code, lines } = svc([...argv]);
      expect({ argv, code, lines: lines.length }).toEqual({ argv, code: 1, lines: 1 });
      expect(lines[0]).toStartWith(prefix);
      expect(lines[0]).toMatch(fullDisk);
      expect(lines[0]).not.toMatch(/is damaged|restore it from/);
    }
    expect(Bun.file(kept).size).toBe(before);
  }, 30_000);

  test("restoring a sound snapshot onto the full volume names the full disk, never blames the snapshot", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "svc-snapshot-"));
    try {
      const snapshot = join(elsewhere, "svc.db");
      await openSqliteStore(snapshot).close();
      const target = join(dir, "restored.db");
      const { code, err } = await captureCli(["restore", "--from", snapshot], { SVC_DATABASE_URL: `sqlite:${target}` });
      expect(code).not.toBe(0);
      const lines = err.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^svc restore: the disk holding \/.+ is full \(\d+ bytes free\): free space there, then restore again/,
      );
      expect(lines[0]).not.toMatch(/cannot be read as a snapshot|not a sound/);
      expect(existsSync(target)).toBe(false);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test("health and readiness say degraded, storage full, with 200", async () => {
    const health = await app.call("GET", "/svc/health");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: "degraded", checks: { database: "ok", storage: "full" } });
    expect((await app.call("GET", "/svc/health/ready")).body).toEqual({
      status: "degraded",
      checks: { database: "ok", storage: "full" },
    });
  });

  test("once space returns, health is ok and writes, logins and refreshes work, without a restart", async () => {
    rmSync(filler);
    for (let i = 1; i <= fillers; i++) rmSync(join(dir, `filler-${i}`));
    // The failed write is remembered for a while: move the clock past it.
    setSystemTime(Date.now() + FULL_REMEMBERED_MS + 100);
    expect((await app.call("GET", "/svc/health")).body).toMatchObject({
      status: "ok",
      checks: { database: "ok", storage: "ok" },
    });
    const signUp = await app.call("POST", "/svc-api/v1/users/create", {
      body: { username: "bob", email: "bob@example.com", password: "correct horse battery" },
    });
    expect(signUp.status).toBe(201);
    const refreshed = await app.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } });
    expect(refreshed.status).toBe(200);
    const login = await app.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: "correct horse battery" },
    });
    expect(login.status).toBe(200);
    rmSync(`${kept}-shm`, { force: true });
    expect(svc(["check"])).toEqual({ code: 0, lines: [""] });
  }, 15_000);
});
