// Runs the store conformance suite on bun:sqlite, in memory and on a file, plus SQLite-only checks.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { readMigrationFiles, type MigrationMeta } from "drizzle-orm/migrator";
import { migrateSqlite } from "../../src/db/sqlite/migrate.ts";
import { auditEvent } from "../../src/audit/model.ts";
import { openSqliteConnection } from "../../src/db/sqlite/connection.ts";
import { openSqliteStore, sqliteStore } from "../../src/db/sqlite/store.ts";
import { applyMigrations } from "../../src/db/sqlite/apply-migrations.ts";
import { emptyDatabase, placeEmptyDatabase, placeImage } from "../../src/db/sqlite/new-database.ts";
import { newUser, storeConformance } from "./conformance.ts";
import journal from "../../drizzle/sqlite/meta/_journal.json";
import { embeddedMigrations } from "../../src/db/migrations.macro.ts";
import { version } from "../../package.json";
import { failure } from "../support/failure.ts";

storeConformance("sqlite in memory", {
  open: async () => openSqliteStore(":memory:"),
  dispose: (store) => store.close(),
});

const dir = mkdtempSync(join(tmpdir(), "svc-store-"));
let n = 0;
storeConformance("sqlite file", {
  open: async () => openSqliteStore(join(dir, `db-${++n}`, "svc.db")),
  dispose: (store) => store.close(),
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the SQLite file", () => {
  test("is in WAL mode with foreign keys enforced, and reopens with its data (migrations run once)", async () => {
    const path = join(dir, "reopen", "svc.db");
    const first = openSqliteStore(path);
    await first.users.create(newUser("ann"));
    await first.close();

    const second = openSqliteStore(path);
    expect((await second.users.findByLogin("ann"))?.username).toBe("ann");
    await second.close();

    const raw = new Database(path, { readonly: true });
    expect(raw.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(raw.query("SELECT count(*) AS n FROM __drizzle_migrations").get()).toEqual({ n: journal.entries.length });
    raw.close();
  });

  test("is made with the folders it needs; a folder that cannot be made is refused with the reason", () => {
    const path = join(dir, "made", "deep", "er", "svc.db");
    const connection = openSqliteConnection(path);
    expect(connection.journalMode).toBe("wal");
    connection.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 0 });
    raw.close();

    // A file where a folder should be: SQLite cannot open the path, nor mkdir make it (it names the file).
    const blocker = join(dir, "blocker");
    writeFileSync(blocker, "not a folder");
    expect(placeEmptyDatabase(join(blocker, "svc.db"))).toBe(false);
    expect(() => openSqliteConnection(join(blocker, "svc.db"))).toThrow(/EEXIST|ENOTDIR/);
    expect(readdirSync(dir)).not.toContain(expect.stringContaining(".new"));
  });

  // A first start writes the empty database made at build time instead of running the migrations;
  // the migrations read here, now, are what it must match, so an image left behind a new migration fails.
  test("a new database is written whole from the empty one the build made, which is what the migrations make", async () => {
    const migrated = new Database(":memory:", { strict: true });
    applyMigrations(migrated, embeddedMigrations("sqlite"), version);
    // In a file: the image's header is in WAL mode, which a database held in memory cannot open.
    writeFileSync(join(dir, "image.db"), emptyDatabase());
    const image = new Database(join(dir, "image.db"), { readonly: true, strict: true });
    const state = (client: Database) => ({
      schema: client.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").all(),
      applied: client.query('SELECT id, hash, created_at FROM "__drizzle_migrations" ORDER BY id').all(),
      pageSize: client.query("PRAGMA page_size").get(),
      userVersion: client.query("PRAGMA user_version").get(),
    });
    expect(state(image)).toEqual(state(migrated));
    expect(image.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    image.close();
    migrated.close();

    const path = join(dir, "whole", "svc.db");
    const connection = openSqliteConnection(path);
    expect(connection.journalMode).toBe("wal");
    // Nothing was written after it: no migration ran, and the switch to WAL was already in its header.
    expect(Bun.file(`${path}-wal`).size).toBe(0);
    // It is the image but for its own identity and epoch (16 hex digits each, in the row and the key's index).
    const written = await Bun.file(path).bytes();
    const another = emptyDatabase();
    expect(written.length).toBe(another.length);
    const differing = written.filter((byte, i) => byte !== another[i]).length;
    expect(differing).toBeGreaterThan(0);
    expect(differing).toBeLessThanOrEqual(3 * 32);
    const row = connection.client.query<{ id: string; epoch: string }, []>("SELECT id, epoch FROM svc_database").all();
    expect(row).toEqual([
      { id: expect.stringMatching(/^[0-9a-f]{16}$/), epoch: expect.stringMatching(/^[0-9a-f]{16}$/) },
    ]);
    expect(connection.client.query("SELECT 1 FROM svc_database WHERE id = ?").get(row[0]!.id)).not.toBeNull();
    expect(connection.client.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    expect(readdirSync(join(dir, "whole")).sort()).toEqual(["svc.db", "svc.db-shm", "svc.db-wal"]);
    connection.close();
  });

  // A crash leaves the WAL beside the database; an operator who then deletes svc.db to start afresh leaves it
  // too, and SQLite would replay it into the new file: the deleted rows would come back, or the file be damaged.
  test("a WAL left from a database that is gone is set aside, not replayed into the new one", async () => {
    const path = join(dir, "gone", "svc.db");
    const crashed = openSqliteStore(path);
    await crashed.users.create(newUser("ann"));
    // The WAL as a crash would leave it: the close below writes it into the file and removes it.
    const leftover = await Bun.file(`${path}-wal`).bytes();
    expect(leftover.byteLength).toBeGreaterThan(0);
    await crashed.close();
    // New files, as after a crash: the closed connection may still map the old index, which must not shrink under it.
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
    writeFileSync(`${path}-wal`, leftover);
    writeFileSync(`${path}-shm`, "stale index");

    const setAside: (readonly string[])[] = [];
    const fresh = openSqliteConnection(path, { onSetAside: (moved) => setAside.push(moved) });
    expect(fresh.client.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 0 });
    expect(fresh.client.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    expect(setAside).toEqual([[expect.stringMatching(/\/gone\/svc\.db-wal\.orphaned-\d{8}T\d{6}Z$/)]]);
    expect(await Bun.file(setAside[0]![0]!).bytes()).toEqual(leftover);
    fresh.close();

    // A database that is there keeps its WAL: nothing is set aside on an ordinary start.
    const again = openSqliteConnection(path, { onSetAside: (moved) => setAside.push(moved) });
    expect(setAside).toHaveLength(1);
    again.close();
  });

  test("the empty database never replaces a file that is there first, and leaves no scratch file", async () => {
    const path = join(dir, "there-first", "svc.db");
    const store = openSqliteStore(path);
    await store.users.create(newUser("ann"));
    await store.close();
    const before = await Bun.file(path).bytes();

    expect(placeEmptyDatabase(path)).toBe(true);
    // "present", not "placed": a start that finds another's file checks and migrates it as any it opens.
    expect(placeImage(path)).toBe("present");
    expect(await Bun.file(path).bytes()).toEqual(before);
    expect(readdirSync(join(dir, "there-first")).filter((name) => !name.startsWith("svc.db-"))).toEqual(["svc.db"]);
    const raw = new Database(path, { readonly: true });
    expect(raw.query("SELECT username FROM users").all()).toEqual([{ username: "ann" }]);
    raw.close();
  });

  test("close() leaves the whole database in the file: nothing waits in the WAL to be written later", async () => {
    // Statements not yet collected keep SQLite's connection open past close(); whatever sat in the WAL
    // was then written into the file whenever the collector got to them, after the caller had moved on
    // (copied the file, damaged it in a test, opened it elsewhere).
    const path = join(dir, "close", "svc.db");
    const store = openSqliteStore(path);
    for (let i = 0; i < 20; i++) {
      await store.users.create({
        id: Bun.randomUUIDv7(),
        username: `user${i}`,
        email: `user${i}@example.com`,
        passwordHash: "h",
        createdAt: new Date().toISOString(),
      });
    }
    await store.users.list({ limit: 10 });
    await store.close();
    expect(Bun.file(`${path}-wal`).size).toBe(0);
    const bytes = await Bun.file(path).bytes();
    Bun.gc(true);
    expect(await Bun.file(path).bytes()).toEqual(bytes);
    // The file alone, as a copy of it would be: every user is there.
    const copy = join(dir, "close", "copy.db");
    await Bun.write(copy, bytes);
    const raw = new Database(copy, { readonly: true });
    expect(raw.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 20 });
    raw.close();
  });

  test("a write compiles its statements once; one that failed on a clash runs again; close() finalizes them", async () => {
    const connection = openSqliteConnection(join(dir, "statements", "svc.db"));
    const compiled: string[] = [];
    const prepare = connection.client.prepare.bind(connection.client);
    connection.client.prepare = ((sql: string) => {
      compiled.push(sql);
      return prepare(sql);
    }) as typeof connection.client.prepare;
    const store = sqliteStore(connection);
    await store.users.create(newUser("ann"));
    const afterFirst = compiled.length;
    expect(afterFirst).toBeGreaterThan(0);
    expect(await failure(store.users.create(newUser("ANN", { email: "other@example.com" })))).toMatchObject({
      code: "username_taken",
    });
    const bob = await store.users.create(newUser("bob"));
    expect(compiled.length).toBe(afterFirst);
    expect((await store.users.findById(bob.id))?.username).toBe("bob");
    await store.close();
    // Closed at once, kept statements and all: the file opens for writing elsewhere with nothing left in the WAL.
    expect(Bun.file(join(dir, "statements", "svc.db-wal")).size).toBe(0);
  });

  // svc migrates with bun:sqlite alone (it needs no Drizzle before it listens); databases that
  // Drizzle's migrator made, whole or part way, must be carried on as Drizzle would.
  test("migrates as Drizzle's own migrator does: the same schema and bookkeeping, and carries on a database Drizzle migrated part way", () => {
    const migrations = readMigrationFiles({ migrationsFolder: join(import.meta.dir, "../../drizzle/sqlite") });
    expect(migrations.length).toBeGreaterThan(2);
    const byDrizzle = (upTo: number) => {
      const client = new Database(":memory:");
      // The dialect's migrate takes the migrations as data; it is internal in Drizzle's types.
      const db = drizzle({ client }) as unknown as {
        dialect: { migrate(m: MigrationMeta[], session: unknown, config: object): void };
        session: unknown;
      };
      db.dialect.migrate(migrations.slice(0, upTo), db.session, {});
      return client;
    };
    const state = (client: Database) => ({
      schema: client
        .query<{ type: string; name: string; sql: string | null }, []>(
          // Drizzle's bookkeeping is compared below; svc's own record beside it is svc's alone.
          "SELECT type, name, sql FROM sqlite_master WHERE tbl_name NOT IN ('__drizzle_migrations', '__svc_migrations') ORDER BY name",
        )
        .all(),
      applied: client.query('SELECT id, hash, created_at FROM "__drizzle_migrations" ORDER BY id').all(),
    });
    const ours = new Database(":memory:");
    migrateSqlite(ours);
    expect(state(ours)).toEqual(state(byDrizzle(migrations.length)));

    const partWay = byDrizzle(2);
    migrateSqlite(partWay);
    expect(state(partWay)).toEqual(state(ours));
    // Current: nothing runs again.
    migrateSqlite(ours);
    expect(state(ours).applied).toHaveLength(migrations.length);
  });

  // svc serve counts administrators before the store has loaded, with a statement of its own.
  test("the connection counts active administrators as the store does", async () => {
    const connection = openSqliteConnection(":memory:");
    const store = sqliteStore(connection);
    const at = new Date().toISOString();
    const person = (name: string, role: "admin" | "user") =>
      store.users.create({
        id: Bun.randomUUIDv7(),
        username: name,
        email: `${name}@example.com`,
        passwordHash: "h",
        createdAt: at,
        role,
      });
    const counts = async () => [connection.activeAdmins(), await store.users.activeAdmins()];
    expect(await counts()).toEqual([0, 0]);
    const [ann] = await Promise.all([person("ann", "admin"), person("bob", "admin"), person("cy", "user")]);
    expect(await counts()).toEqual([2, 2]);
    const disabling = auditEvent("admin.user.updated", { origin: { address: "192.0.2.9", requestId: "r" } }, at);
    await store.users.administer(ann!.id, { status: "disabled" }, new Date().toISOString(), disabling);
    expect(await counts()).toEqual([1, 1]);
    await store.close();
  });

  test("refuses a category whose creator does not exist (foreign keys are on)", async () => {
    const store = openSqliteStore(":memory:");
    const orphan = {
      id: Bun.randomUUIDv7(),
      name: "x",
      description: null,
      colorHex: "#000000",
      icon: null,
      createdBy: Bun.randomUUIDv7(),
      createdAt: new Date().toISOString(),
    };
    expect(await failure(store.categories.create(orphan))).toBeInstanceOf(Error);
    await store.close();
  });
});
