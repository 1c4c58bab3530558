// A damaged SQLite file is found at start (svc refuses it with one line) and by `svc check`, which
// also reports on PostgreSQL. Nothing is written to the database either way.
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { DamagedDatabase } from "../src/db/store.ts";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";
import { runProcessSync, SOURCE_SVC } from "./support/cli.ts";
import { captureCli } from "./support/cli.ts";

const pgAvailable = await postgresAvailable();
const dir = mkdtempSync(join(tmpdir(), "svc-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** An svc database with enough users to fill many pages, closed (its WAL folded into the file). */
async function svcDatabase(): Promise<string> {
  const path = join(dir, `${++n}.db`);
  const store = openSqliteStore(path);
  for (let i = 0; i < 600; i++) {
    await store.users.create({
      id: Bun.randomUUIDv7(),
      username: `user${i}`,
      email: `user${i}@example.com`,
      passwordHash: "x".repeat(90),
      createdAt: new Date().toISOString(),
    });
  }
  await store.close();
  return path;
}

/** Overwrites one page in the middle of the file, as a failing disk or a bad copy would. */
function damage(path: string): void {
  const fd = openSync(path, "r+");
  writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096 * 20);
  closeSync(fd);
}

const check = (url: string) => captureCli(["check"], { SVC_DATABASE_URL: url });

describe("a damaged SQLite file", () => {
  test("svc check: 0 and ok for a sound file; 1 with the problems for a damaged one", async () => {
    const path = await svcDatabase();
    expect(await check(`sqlite:${path}`)).toEqual({ code: 0, out: `sqlite:${path}: ok\n`, err: "" });
    damage(path);
    const damaged = await check(`sqlite:${path}`);
    expect(damaged.code).toBe(1);
    expect(damaged.err).toStartWith(`svc check: sqlite:${path}: `);
    expect(damaged.err).toMatch(/page 21/);
  });

  test("is refused when opened, before anything is written", async () => {
    const path = await svcDatabase();
    damage(path);
    const before = await Bun.file(path).bytes();
    expect(() => openSqliteStore(path)).toThrow(DamagedDatabase);
    expect(() => openSqliteStore(path)).toThrow(/is damaged \(.*page 21.*\); restore it from a backup/);
    expect(await Bun.file(path).bytes()).toEqual(before);
  });

  test("svc serve exits 1 with one line naming it", () => {
    return svcDatabase().then((path) => {
      damage(path);
      const serve = runProcessSync(SOURCE_SVC, {
        env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_DATABASE_URL: `sqlite:${path}` },
      });
      expect(serve.code).toBe(1);
      const lines = serve.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`svc: cannot open the database sqlite:${path}: ${path} is damaged`);
    });
  });

  test("svc check on a missing file says so, and creates nothing", async () => {
    const missing = join(dir, "missing.db");
    expect(await check(`sqlite:${missing}`)).toEqual({
      code: 1,
      out: "",
      err: `svc check: sqlite:${missing}: no database at ${missing}\n`,
    });
    expect(await Bun.file(missing).exists()).toBe(false);
  });
});

describe.skipIf(!pgAvailable)("svc check on PostgreSQL", () => {
  test("ok for a migrated database; a problem for one without svc's tables", async () => {
    const database = await createTestDatabase("check");
    try {
      const bare = await check(database.url);
      expect(bare.code).toBe(1);
      expect(bare.err).toContain("not an svc database");
      expect((await captureCli(["migrate"], { SVC_DATABASE_URL: database.url })).code).toBe(0);
      const sound = await check(database.url);
      expect(sound.code).toBe(0);
      expect(sound.out).toEndWith(": ok\n");
      // Every table is read, the ones added since 0.1 among them.
      const admin = new SQL({ url: database.url, max: 1 });
      await admin.unsafe(
        "ALTER TABLE audit_events RENAME TO audit_events_gone; ALTER TABLE sessions RENAME TO sessions_gone",
      );
      await admin.close();
      const broken = await check(database.url);
      expect(broken.code).toBe(1);
      expect(broken.err).toContain("audit_events cannot be read");
      expect(broken.err).toContain("sessions cannot be read");
    } finally {
      await database.drop();
    }
  });

  test("a problem, one line, for a schema object svc's migrations do not make, or one of its own changed (#53 item 2)", async () => {
    const database = await createTestDatabase("check_schema");
    try {
      expect((await captureCli(["migrate"], { SVC_DATABASE_URL: database.url })).code).toBe(0);
      const admin = new SQL({ url: database.url, max: 1 });
      const url = new URL(database.url);
      const name = `postgres://${url.username}@${url.host}${url.pathname}`;
      const cases: [string, string, string][] = [
        [
          "CREATE FUNCTION everyone_admin() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.role := 'admin'; RETURN NEW; END $$",
          'it holds function "everyone_admin", which svc does not make',
          "DROP FUNCTION everyone_admin()",
        ],
        [
          "CREATE TRIGGER everyone_admin BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION bump_table_version()",
          'it holds trigger "everyone_admin" on users, which svc does not make',
          "DROP TRIGGER everyone_admin ON users",
        ],
        ["CREATE TABLE loot (x text)", 'it holds table "loot", which svc does not make', "DROP TABLE loot"],
        [
          "CREATE VIEW hashes AS SELECT password_hash FROM users",
          'it holds view "hashes", which svc does not make',
          "DROP VIEW hashes",
        ],
        [
          "CREATE OR REPLACE FUNCTION announce_state_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$",
          'its function "announce_state_change" is not as svc makes it',
          "",
        ],
      ];
      for (const [plant, problem, undo] of cases) {
        await admin.unsafe(plant);
        expect({ plant, ...(await check(database.url)) }).toEqual({
          plant,
          code: 1,
          out: "",
          err: `svc check: ${name}: ${problem}\n`,
        });
        if (undo) await admin.unsafe(undo);
      }
      await admin.close();
    } finally {
      await database.drop();
    }
  });
});
