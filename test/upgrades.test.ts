// Upgrades and going back. svc says what it migrates (one line per migration, by name), keeps the
// SQLite database as it was next to it first, and a binary refuses a database that a later svc
// migrated: serve and every command, SQLite and PostgreSQL, with one line naming both versions.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations } from "../src/db/sqlite/apply-migrations.ts";
import { embeddedMigrations } from "../src/db/migrations.macro.ts";
import { version } from "../package.json";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";
import { captureCli, runProcessSync, SOURCE_SVC, spawnProcess } from "./support/cli.ts";

const pgAvailable = await postgresAvailable();
const dir = mkdtempSync(join(tmpdir(), "svc-upgrades-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SQLITE = embeddedMigrations("sqlite");
const POSTGRES = embeddedMigrations("postgres");
/** What svc 0.1.0 carried: the first five. */
const OLD = 5;
const SECRET = "upgrades-test-secret-of-at-least-32-bytes";

let n = 0;
const fresh = (name: string) => join(dir, `${++n}`, name);

function cli(argv: string[], url: string, stdin = "") {
  return captureCli(
    argv,
    { SVC_DATABASE_URL: url, SVC_ENV: "test" },
    { secrets: { isTTY: false, readAll: async () => stdin, ask: async () => "" } },
  );
}

/** A database as svc 0.1.0 left it: its five migrations in Drizzle's bookkeeping, and one user. */
function oldDatabase(path: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)');
  for (const migration of SQLITE.slice(0, OLD)) {
    for (const statement of migration.sql) db.run(statement);
    db.run('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)', [
      migration.hash,
      migration.folderMillis,
    ]);
  }
  const at = new Date().toISOString();
  db.run(
    "INSERT INTO users (id, username, username_key, email, password_hash, created_at, updated_at) VALUES (?, 'ann', 'ann', 'ann@example.com', 'x', ?, ?)",
    [Bun.randomUUIDv7(), at, at],
  );
  db.close();
}

/** A database as svc `svcVersion` left it: the first five migrations, each recorded as its own. */
function recordedOldDatabase(path: string, svcVersion: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  applyMigrations(db, SQLITE.slice(0, OLD), svcVersion);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

/** The refusal of a database behind this binary, which `theirs` migrated to its OLDth migration. */
function behind(database: string, theirs: string, migrations = SQLITE, old = OLD): string {
  return `${database} is at ${theirs}'s schema (up to ${migrations[old - 1]!.name}), behind svc ${version} (up to ${migrations.at(-1)!.name}): run \`svc migrate\` with this svc first (or start it), after stopping any older svc serving it`;
}

/** The way back an upgrade prints (#53 item 10). */
function wayBack(path: string, snapshot: string, previous: string): string {
  return `to go back to ${previous}: stop svc; copy ${snapshot} over ${path} and delete ${path}-wal and ${path}-shm; then start ${previous} (never on ${path} as it is now: it is migrated)`;
}

/** A current database, then migrated by "svc 9.9.9", whose migration this svc does not know. */
async function laterDatabase(path: string): Promise<void> {
  expect((await cli(["migrate"], `sqlite:${path}`)).code).toBe(0);
  const db = new Database(path, { strict: true });
  const future = { ...SQLITE.at(-1)!, name: "0099_future", folderMillis: SQLITE.at(-1)!.folderMillis + 1000 };
  applyMigrations(db, [{ ...future, sql: ["CREATE TABLE future (x text)"], hash: "f".repeat(64) }], "9.9.9");
  // Into the file now: closed with statements still cached, SQLite would leave that to the collector.
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

/** The JSON lines `svc serve` writes until it listens; then it is stopped. */
async function serveLines(url: string): Promise<Array<Record<string, unknown>>> {
  const proc = spawnProcess(SOURCE_SVC, {
    env: { PATH: process.env.PATH ?? "", SVC_DATABASE_URL: url, SVC_PORT: "0", SVC_JWT_SECRET: SECRET },
  });
  let text = "";
  const decoder = new TextDecoder();
  const reader = proc.stdout.getReader();
  // Read to the end (a pipe closed early would fail svc's next write): stopped once it listens.
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    text += decoder.decode(read.value);
    if (text.includes('"svc listening"') && !proc.killed) proc.kill("SIGTERM");
  }
  expect(await proc.exited).toBe(0);
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("upgrading an SQLite database", () => {
  test("svc migrate keeps the database as it was next to it (0600), then names each migration it applies", async () => {
    const path = fresh("svc.db");
    oldDatabase(path);
    const snapshot = `${path}.before-${version}`;
    const result = await cli(["migrate"], `sqlite:${path}`);
    expect(result).toEqual({
      code: 0,
      out: [
        `kept the database as it was in ${snapshot}`,
        ...SQLITE.slice(OLD).map((m) => `applied migration ${m.name}`),
        wayBack(path, snapshot, "the earlier svc"),
        `migrated sqlite:${path}`,
        "",
      ].join("\n"),
      err: "",
    });
    expect(mode(snapshot)).toBe("600");
    const before = new Database(snapshot, { readonly: true });
    expect(before.query("SELECT count(*) AS n FROM __drizzle_migrations").get()).toEqual({ n: OLD });
    expect(before.query("SELECT username FROM users").all()).toEqual([{ username: "ann" }]);
    before.close();

    // Up to date: nothing applied, no second snapshot.
    expect(await cli(["migrate"], `sqlite:${path}`)).toEqual({ code: 0, out: `migrated sqlite:${path}\n`, err: "" });
    expect(readdirSync(join(path, "..")).filter((f) => f.includes(".before-"))).toEqual([`svc.db.before-${version}`]);
  });

  test("svc serve logs the snapshot and each migration at info, by name, before it listens", async () => {
    const path = fresh("svc.db");
    oldDatabase(path);
    const lines = await serveLines(`sqlite:${path}`);
    const upgrade = lines.filter((line) => line.migration !== undefined || line.snapshot !== undefined);
    const snapshot = `${path}.before-${version}`;
    expect(upgrade.map(({ level, msg, migration, snapshot }) => ({ level, msg, migration, snapshot }))).toEqual([
      { level: "info", msg: "kept the database as it was", migration: undefined, snapshot },
      ...SQLITE.slice(OLD).map((m) => ({
        level: "info",
        msg: "applied migration",
        migration: m.name,
        snapshot: undefined,
      })),
      { level: "info", msg: wayBack(path, snapshot, "the earlier svc"), migration: undefined, snapshot },
    ]);
    expect(lines.findIndex((line) => line.msg === "svc listening")).toBeGreaterThan(lines.indexOf(upgrade.at(-1)!));
  });

  test("every command but serve and migrate refuses a database that is behind: one line naming both versions, exit 1, nothing written (#53 item 9)", async () => {
    const path = fresh("svc.db");
    recordedOldDatabase(path, "0.1.1");
    const url = `sqlite:${path}`;
    const files = () => readdirSync(join(path, "..")).sort();
    const before = { bytes: await Bun.file(path).bytes(), files: files() };
    const target = fresh("target.db");
    expect((await cli(["migrate"], `sqlite:${target}`)).code).toBe(0);
    const source = fresh("source.db");
    expect((await cli(["migrate"], `sqlite:${source}`)).code).toBe(0);
    const commands = [
      ["admin", "create", "--username", "root", "--email", "root@example.com", "--password-stdin"],
      ["user", "list"],
      ["user", "disable", "ann"],
      ["invitation", "list"],
      ["audit"],
      ["copy", "--from", url, "--to", `sqlite:${target}`],
      ["copy", "--from", `sqlite:${source}`, "--to", url],
    ];
    for (const argv of commands) {
      const result = await cli(argv, url, "correct horse battery");
      const prefix = argv[0] === "copy" ? "svc copy: nothing copied: " : `svc ${argv[0]}: `;
      expect({ argv, ...result }).toEqual({ argv, code: 1, out: "", err: `${prefix}${behind(url, "svc 0.1.1")}\n` });
    }
    expect({ bytes: await Bun.file(path).bytes(), files: files() }).toEqual(before);
    // svc check reports the same line, and `svc migrate` then brings it up, after which the commands work.
    expect(await cli(["check"], url)).toEqual({
      code: 1,
      out: "",
      err: `svc check: ${url}: ${behind(url, "svc 0.1.1")}\n`,
    });
    expect((await cli(["migrate"], url)).code).toBe(0);
    expect(await cli(["user", "list"], url)).toMatchObject({ code: 0, err: `svc user: using ${url}\n` });
  });

  test("a database an svc that kept no record migrated is named as an earlier svc's", async () => {
    const path = fresh("svc.db");
    oldDatabase(path);
    const url = `sqlite:${path}`;
    expect(await cli(["user", "list"], url)).toEqual({
      code: 1,
      out: "",
      err: `svc user: ${behind(url, "an earlier svc")}\n`,
    });
  });

  test("the way back names the svc that migrated it last; snapshots beyond the newest two are deleted, others kept (#53 item 10)", async () => {
    const path = fresh("svc.db");
    recordedOldDatabase(path, "0.1.1");
    const folder = join(path, "..");
    // Two earlier upgrades' snapshots, oldest first, and files that are not such snapshots.
    const earlier = ["svc.db.before-0.1.0", "svc.db.before-0.1.1-20260101T000000Z"];
    const others = ["svc.db.before-restore-20260102T000000Z", "other.db.before-0.1.0"];
    for (const [i, name] of [...earlier, ...others].entries()) {
      await Bun.write(join(folder, name), "a snapshot");
      // The second written "in the future" (a clock set wrong): the snapshot this upgrade makes is kept all the same.
      const at = i === 1 ? 4_000_000_000 : 1_700_000_000 + i * 1000;
      utimesSync(join(folder, name), at, at);
    }
    const snapshot = `${path}.before-${version}`;
    const result = await cli(["migrate"], `sqlite:${path}`);
    expect(result.code).toBe(0);
    expect(result.out.split("\n").slice(-4, -1)).toEqual([
      wayBack(path, snapshot, "svc 0.1.1"),
      `deleted ${join(folder, earlier[0]!)}, an earlier upgrade's snapshot (the newest two are kept)`,
      `migrated sqlite:${path}`,
    ]);
    expect(
      readdirSync(folder)
        .filter((f) => f.includes(".before-"))
        .sort(),
    ).toEqual([`svc.db.before-${version}`, earlier[1]!, ...others].sort());
  });

  test("a new database, or one up to date, gets no snapshot", async () => {
    const path = fresh("svc.db");
    expect((await serveLines(`sqlite:${path}`)).filter((line) => line.migration || line.snapshot)).toEqual([]);
    expect((await cli(["migrate"], `sqlite:${path}`)).out).toBe(`migrated sqlite:${path}\n`);
    expect(readdirSync(join(path, "..")).filter((f) => !f.startsWith("svc.db"))).toEqual([]);
    expect(readdirSync(join(path, "..")).some((f) => f.includes(".before-"))).toBe(false);
  });

  test("a snapshot of that name already there is kept, and the new one gets the time besides", async () => {
    const path = fresh("svc.db");
    oldDatabase(path);
    const taken = `${path}.before-${version}`;
    await Bun.write(taken, "an earlier snapshot");
    const result = await cli(["migrate"], `sqlite:${path}`);
    expect(result.code).toBe(0);
    const kept = /^kept the database as it was in (\S+)\n/.exec(result.out)![1]!;
    expect(kept).toMatch(new RegExp(`^${taken.replaceAll(".", "\\.")}-\\d{8}T\\d{6}Z$`));
    expect(await Bun.file(taken).text()).toBe("an earlier snapshot");
    expect(mode(kept)).toBe("600");
  });
});

describe("a database a later svc migrated", () => {
  const refusal = (database: string) =>
    `${database} was migrated by svc 9.9.9 (to 0099_future), which svc ${version} (up to ${SQLITE.at(-1)!.name}) does not know: run svc 9.9.9 or later, or go back to the copy kept before that upgrade (docs/operations.md, "Upgrading and going back")`;

  test("svc serve refuses it: one line naming both versions, exit 1, nothing written", async () => {
    const path = fresh("svc.db");
    await laterDatabase(path);
    const before = await Bun.file(path).bytes();
    const serve = runProcessSync(SOURCE_SVC, {
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_DATABASE_URL: `sqlite:${path}`, SVC_JWT_SECRET: SECRET },
      // A server that does not refuse would serve on: stopped, for the test to fail rather than hang.
      timeoutMs: 15_000,
    });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toBe(`svc: cannot open the database sqlite:${path}: ${refusal(`sqlite:${path}`)}\n`);
    expect(await Bun.file(path).bytes()).toEqual(before);
  });

  test("so does every command: one line, exit 1, nothing written", async () => {
    const path = fresh("svc.db");
    await laterDatabase(path);
    const before = await Bun.file(path).bytes();
    const url = `sqlite:${path}`;
    const commands = [
      ["migrate"],
      ["check"],
      ["backup", join(path, "..", "backup.db")],
      ["copy", "--from", url, "--to", `sqlite:${fresh("target.db")}`],
      ["admin", "create", "--username", "root", "--email", "root@example.com", "--password-stdin"],
      ["user", "list"],
      ["user", "disable", "ann"],
      ["audit"],
    ];
    for (const argv of commands) {
      const result = await cli(argv, url, "correct horse battery");
      const prefix =
        argv[0] === "check"
          ? `svc check: ${url}: `
          : argv[0] === "copy"
            ? "svc copy: nothing copied: "
            : `svc ${argv[0]}: `;
      expect({ argv, ...result }).toEqual({ argv, code: 1, out: "", err: `${prefix}${refusal(url)}\n` });
    }
    expect(await Bun.file(path).bytes()).toEqual(before);
    expect(readdirSync(join(path, "..")).filter((f) => f.includes(".before-") || f === "backup.db")).toEqual([]);
  });

  test("copy refuses one as its target as well", async () => {
    const source = fresh("source.db");
    expect((await cli(["migrate"], `sqlite:${source}`)).code).toBe(0);
    const target = fresh("svc.db");
    await laterDatabase(target);
    const result = await cli(["copy", "--from", `sqlite:${source}`, "--to", `sqlite:${target}`], "sqlite::memory:");
    expect(result).toEqual({ code: 1, out: "", err: `svc copy: nothing copied: ${refusal(`sqlite:${target}`)}\n` });
  });
});

describe.skipIf(!pgAvailable)("on PostgreSQL", () => {
  test("svc migrate names each migration it applies", async () => {
    const database = await createTestDatabase("upgrade_log");
    try {
      const result = await cli(["migrate"], database.url);
      const name = new URL(database.url);
      expect(result).toEqual({
        code: 0,
        out: [
          ...POSTGRES.map((m) => `applied migration ${m.name}`),
          `migrated postgres://${name.username}@${name.host}${name.pathname}`,
          "",
        ].join("\n"),
        err: "",
      });
      expect((await cli(["migrate"], database.url)).out).not.toContain("applied");
    } finally {
      await database.drop();
    }
  });

  test("a database an earlier svc migrated is refused by every command but serve and migrate, untouched (#53 item 9)", async () => {
    const database = await createTestDatabase("upgrade_behind");
    try {
      const admin = new SQL({ url: database.url, max: 1 });
      // As svc 0.1.1 would leave it: its first five migrations, each recorded as its own.
      await admin`CREATE SCHEMA drizzle`;
      await admin`CREATE TABLE drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`;
      await admin`CREATE TABLE drizzle.__svc_migrations (created_at bigint PRIMARY KEY, name text NOT NULL, svc_version text NOT NULL)`;
      for (const migration of POSTGRES.slice(0, OLD)) {
        for (const statement of migration.sql) await admin.unsafe(statement);
        await admin`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`;
        await admin`INSERT INTO drizzle.__svc_migrations VALUES (${migration.folderMillis}, ${migration.name}, '0.1.1')`;
      }
      const url = new URL(database.url);
      const described = `postgres://${url.username}@${url.host}${url.pathname}`;
      const line = behind(described, "svc 0.1.1", POSTGRES);
      const target = fresh("target.db");
      expect((await cli(["migrate"], `sqlite:${target}`)).code).toBe(0);
      for (const argv of [
        ["user", "list"],
        ["audit"],
        ["invitation", "list"],
        ["copy", "--from", database.url, "--to", `sqlite:${target}`],
      ]) {
        const result = await cli(argv, database.url);
        const prefix = argv[0] === "copy" ? "svc copy: nothing copied: " : `svc ${argv[0]}: `;
        expect({ argv, ...result }).toEqual({ argv, code: 1, out: "", err: `${prefix}${line}\n` });
      }
      expect(await cli(["check"], database.url)).toEqual({
        code: 1,
        out: "",
        err: `svc check: ${described}: ${line}\n`,
      });
      const [{ n }] = await admin`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      expect(n).toBe(OLD);
      expect((await cli(["migrate"], database.url)).code).toBe(0);
      expect((await cli(["user", "list"], database.url)).code).toBe(0);
      await admin.close();
    } finally {
      await database.drop();
    }
  });

  test("a database a later svc migrated is refused by serve and every command: one line naming both versions, exit 1", async () => {
    const database = await createTestDatabase("upgrade_later");
    try {
      expect((await cli(["migrate"], database.url)).code).toBe(0);
      const future = POSTGRES.at(-1)!.folderMillis + 1000;
      const admin = new SQL({ url: database.url, max: 1 });
      // As a later svc leaves it, short of svc's own record of it: a row later than any this binary knows.
      await admin`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${"f".repeat(64)}, ${future})`;
      const url = new URL(database.url);
      const described = `postgres://${url.username}@${url.host}${url.pathname}`;
      const refusal = `${described} was migrated by a later svc (to a migration of ${new Date(future).toISOString()}), which svc ${version} (up to ${POSTGRES.at(-1)!.name}) does not know: run that svc or later, or go back to the copy kept before that upgrade (docs/operations.md, "Upgrading and going back")`;

      const serve = runProcessSync(SOURCE_SVC, {
        env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_DATABASE_URL: database.url, SVC_JWT_SECRET: SECRET },
        timeoutMs: 15_000,
      });
      expect({ code: serve.code, err: serve.stderr }).toEqual({
        code: 1,
        err: `svc: cannot open the database ${described}: ${refusal}\n`,
      });
      for (const argv of [["migrate"], ["check"], ["user", "list"], ["audit"]]) {
        const result = await cli(argv, database.url);
        const prefix = argv[0] === "check" ? `svc check: ${described}: ` : `svc ${argv[0]}: `;
        expect({ argv, ...result }).toEqual({ argv, code: 1, out: "", err: `${prefix}${refusal}\n` });
      }
      const [{ n }] = await admin`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      await admin.close();
      expect(n).toBe(POSTGRES.length + 1);
    } finally {
      await database.drop();
    }
  });
});
