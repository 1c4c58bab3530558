// `svc backup --now`, `svc backup --list` and `svc restore`, called in process through runCli: a snapshot
// stored in a folder, listed, and brought back whole into an empty data folder; a database already there
// refused or kept aside; a snapshot that is not whole and sound refused with one line, nothing changed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../package.json";
import { embeddedMigrations } from "../src/db/migrations.macro.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { testApp } from "./helpers.ts";
import { captureCli } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-backup-restore-"));
const live = join(dir, "live", "svc.db");
const backups = join(dir, "backups");
const ROWS = ["users", "categories", "sessions", "audit_events"] as const;
let store: VersionedStore;

beforeAll(async () => {
  // A database with a little of everything, open as a serving svc holds it.
  store = await openSqliteStore(live);
  const app = await testApp({ on: store });
  for (const name of ["ann", "bob", "cid"]) {
    const { token } = await app.signUp(name);
    await app.graphql(`mutation { createCategory(input: { name: "${name}'s" }) { id } }`, { token });
  }
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (argv: string[], env: Record<string, string> = {}) => captureCli(argv, env);

/** Every row of the tables a restore reports, in a stable order. */
function rows(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(ROWS.map((table) => [table, db.query(`SELECT * FROM ${table} ORDER BY 1`).all()]));
  } finally {
    db.close();
  }
}

/** A fresh data folder, and the settings that name a database in it. */
function freshBox(): { path: string; env: Record<string, string> } {
  const box = mkdtempSync(join(dir, "box-"));
  const path = join(box, "data", "svc.db");
  return { path, env: { SVC_DATABASE_URL: `sqlite:${path}` } };
}

/** The live database's identity, which its snapshots' names carry. */
function liveIdentity(): string {
  const db = new Database(live, { readonly: true });
  try {
    return db.query<{ id: string }, []>("SELECT id FROM svc_database").get()!.id;
  } finally {
    db.close();
  }
}
const liveEnv = { SVC_DATABASE_URL: `sqlite:${live}`, SVC_BACKUP_TO: backups, SVC_BACKUP_KEEP: "2" };
const snapshots = () => readdirSync(backups).sort();

describe("svc backup --now and --list", () => {
  test("--now stores a checked, gzipped snapshot at SVC_BACKUP_TO, keeping SVC_BACKUP_KEEP; --list shows them", async () => {
    const first = await cli(["backup", "--now"], liveEnv);
    expect(first).toMatchObject({ code: 0, err: "" });
    expect(first.out).toMatch(
      new RegExp(
        `^backed up sqlite:${live} to ${backups}/svc-\\d{8}T\\d{6}Z-${version.replaceAll(".", "\\.")}-${liveIdentity()}\\.db\\.gz \\(\\d+ bytes: 3 users, 3 categories, 3 sessions, \\d+ audit events\\)\\n$`,
      ),
    );
    const [name] = snapshots();
    expect(readFileSync(join(backups, name!)).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // Three older ones, and the next: the two oldest go. One named before svc named databases is no one's: it stays.
    const older = ["20250101", "20250102", "20250103"].map((day) => `svc-${day}T000000Z-0.1.0-${liveIdentity()}.db.gz`);
    for (const old of [...older.slice(0, 2), "svc-20241231T000000Z-0.1.0.db.gz"])
      copyFileSync(join(backups, name!), join(backups, old));
    renameSync(join(backups, name!), join(backups, older[2]!));
    const second = await cli(["backup", "--now"], liveEnv);
    expect(second.out).toContain("; deleted the 2 oldest beyond SVC_BACKUP_KEEP=2");
    expect(snapshots()).toEqual(["svc-20241231T000000Z-0.1.0.db.gz", older[2], expect.stringMatching(/^svc-2\d{7}T/)]);
    rmSync(join(backups, "svc-20241231T000000Z-0.1.0.db.gz"));

    const listed = await cli(["backup", "--list"], liveEnv);
    expect(listed.code).toBe(0);
    const lines = listed.out.trimEnd().split("\n");
    expect(lines[0]).toBe("name\tbytes\ttaken\tversion\tdatabase");
    expect(lines.slice(1).map((line) => line.split("\t")[0])).toEqual(snapshots());
    const [listedName, bytes, taken, listedVersion, database] = lines.at(-1)!.split("\t");
    expect(database).toBe(liveIdentity());
    expect(Number(bytes)).toBe(readFileSync(join(backups, listedName!)).length);
    expect(taken).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(listedVersion).toBe(version);
  });

  test("--list with nothing there says so; without SVC_BACKUP_TO it is a configuration error", async () => {
    expect(await cli(["backup", "--list"], { ...liveEnv, SVC_BACKUP_TO: join(dir, "empty") })).toMatchObject({
      code: 0,
      out: "",
      err: `svc backup: no snapshots at ${join(dir, "empty")}\n`,
    });
    const unset = await cli(["backup", "--list"], { SVC_DATABASE_URL: `sqlite:${live}` });
    expect(unset.code).toBe(2);
    expect(unset.err).toStartWith("svc: SVC_BACKUP_TO: required for svc backup --list");
    expect((await cli(["backup", "--later"], liveEnv)).code).toBe(2);
  });
});

describe("svc restore", () => {
  test("brings the newest snapshot back into an empty data folder, every row, and says what it restored", async () => {
    await cli(["backup", "--now"], liveEnv);
    const newest = snapshots().at(-1)!;
    const { path, env } = freshBox();
    const restored = await cli(["restore", "--from", join(backups, "latest")], env);
    expect(restored).toMatchObject({ code: 0, err: "" });
    const audit = rows(live).audit_events!.length;
    expect(restored.out).toBe(
      [
        `restored sqlite:${path} from ${backups}/${newest}`,
        `  snapshot taken ${newest.slice(4, 8)}-${newest.slice(8, 10)}-${newest.slice(10, 12)}T${newest.slice(13, 15)}:${newest.slice(15, 17)}:${newest.slice(17, 19)}Z by svc ${version}`,
        `  3 users, 3 categories, 3 sessions, ${audit} audit events`,
        "  start svc to serve it (it applies any migration this svc has that the snapshot lacks)",
        "",
      ].join("\n"),
    );
    expect(rows(path)).toEqual(rows(live));
    expect(readdirSync(join(path, ".."))).toEqual(["svc.db"]);
    // It serves: a store opens it and finds the accounts.
    const served = await openSqliteStore(path);
    expect((await served.users.findByLogin("ann"))?.email).toBe("ann@example.com");
    await served.close();
  });

  test("takes a plain snapshot of `svc backup <file>` too", async () => {
    const plain = join(dir, "plain.db");
    expect((await cli(["backup", plain], liveEnv)).code).toBe(0);
    const { path, env } = freshBox();
    const restored = await cli(["restore", "--from", plain], env);
    expect(restored.code).toBe(0);
    expect(restored.out).toContain("snapshot of an unknown time and svc");
    expect(rows(path)).toEqual(rows(live));
  });

  test("refuses a database that is there; --force keeps it aside, with its -wal and -shm, as <file>.before-restore-<time>", async () => {
    const { path, env } = freshBox();
    mkdirSync(join(path, ".."), { recursive: true });
    // As a killed svc leaves it: the database, with rows still only in its log.
    const crashed = new Database(join(dir, "crashed.db"), { create: true });
    crashed.run("PRAGMA journal_mode = WAL");
    crashed.run("PRAGMA wal_autocheckpoint = 0");
    crashed.run("CREATE TABLE kept (text TEXT)");
    crashed.run("INSERT INTO kept VALUES ('only in the log')");
    for (const suffix of ["", "-wal", "-shm"]) copyFileSync(join(dir, `crashed.db${suffix}`), `${path}${suffix}`);
    crashed.close();
    const before = readFileSync(path);
    const refused = await cli(["restore", "--from", join(backups, "latest")], env);
    expect(refused).toEqual({
      code: 1,
      out: "",
      err: `svc restore: there is a database at ${path} already; --force replaces it, keeping it as ${path}.before-restore-<time>; nothing was changed\n`,
    });
    expect(readFileSync(path)).toEqual(before);

    const forced = await cli(["restore", "--from", join(backups, "latest"), "--force"], env);
    expect(forced.err).toBe("");
    expect(forced.code).toBe(0);
    const kept = /kept as (\S+)\n/.exec(forced.out)![1]!;
    expect(kept).toMatch(new RegExp(`^${path}\\.before-restore-\\d{8}T\\d{6}Z$`));
    // Kept whole: opened where it now is, it reads what its log held.
    const aside = new Database(kept, { readonly: true });
    expect(aside.query("SELECT text FROM kept").all()).toEqual([{ text: "only in the log" }]);
    aside.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(rows(path)).toEqual(rows(live));
  });

  test("sets aside a log a database that is gone left, rather than let SQLite replay it into the snapshot", async () => {
    const { path, env } = freshBox();
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(`${path}-wal`, "a gone database's log");
    const restored = await cli(["restore", "--from", join(backups, "latest")], env);
    expect(restored.code).toBe(0);
    const orphan = /a log left by a database that is gone is kept as (\S+)\n/.exec(restored.out)![1]!;
    expect(orphan).toMatch(new RegExp(`^${path}-wal\\.orphaned-\\d{8}T\\d{6}Z$`));
    expect(readFileSync(orphan, "utf8")).toBe("a gone database's log");
    expect(rows(path)).toEqual(rows(live));
  });

  test("refuses, even with --force, a database that is open (svc serving it)", async () => {
    const refused = await cli(["restore", "--from", join(backups, "latest"), "--force"], {
      SVC_DATABASE_URL: `sqlite:${live}`,
    });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      `svc restore: ${live} is open in another process (svc serving it?): stop svc, then restore; nothing was changed\n`,
    );
    expect(readdirSync(join(live, "..")).filter((name) => name.includes("before-restore"))).toEqual([]);
  });

  describe("refuses a snapshot that is not whole and sound, with one line, changing nothing", () => {
    const good = () => readFileSync(join(backups, snapshots().at(-1)!));
    const plain = () => Bun.gunzipSync(good());
    /** The plain database with a page of one of its tables overwritten. */
    const damaged = () => {
      const bytes = new Uint8Array(plain());
      const pageSize = (bytes[16]! << 8) | bytes[17]!;
      bytes.fill(0xa5, pageSize * 3 + 8, pageSize * 4 - 8);
      return bytes;
    };
    const cases: [string, () => Uint8Array, RegExp][] = [
      [
        "bad gzip",
        () => Uint8Array.from([0x1f, 0x8b, 8, 0, ...new Array(64).fill(7)]),
        /cannot be read as a snapshot: /,
      ],
      ["gzip cut short", () => good().subarray(0, Math.floor(good().length / 2)), /cannot be read as a snapshot: /],
      [
        "not a snapshot at all",
        () => new TextEncoder().encode("these are not the bytes you are looking for"),
        /neither gzip data nor an SQLite database/,
      ],
      [
        "gzip of something else",
        () => Bun.gzipSync(new TextEncoder().encode("hello")),
        /is not a sound svc database: /,
      ],
      ["a damaged database", () => Bun.gzipSync(damaged()), /is not a sound svc database: /],
      [
        "an SQLite database that is not svc's",
        () => Bun.gzipSync(new Uint8Array(otherDatabase())),
        /is not a sound svc database: /,
      ],
    ];
    for (const [what, bytes, why] of cases) {
      test(what, async () => {
        const file = join(dir, `${what.replaceAll(" ", "-")}.db.gz`);
        writeFileSync(file, bytes());
        for (const force of [false, true]) {
          const { path, env } = freshBox();
          if (force) {
            mkdirSync(join(path, ".."), { recursive: true });
            copyFileSync(live, path);
          }
          const before = force ? readFileSync(path) : null;
          const refused = await cli(["restore", "--from", file, ...(force ? ["--force"] : [])], env);
          expect(refused.code).toBe(1);
          expect(refused.out).toBe("");
          expect(refused.err.split("\n")).toHaveLength(2);
          expect(refused.err).toStartWith(`svc restore: ${file} `);
          expect(refused.err).toMatch(why);
          expect(refused.err).toEndWith("; nothing was changed\n");
          // Not even a folder made for it is left.
          expect(readdirSync(join(path, "..", ".."))).toEqual(force ? ["data"] : []);
          if (force) expect(readdirSync(join(path, ".."))).toEqual(["svc.db"]);
          if (before) expect(readFileSync(path)).toEqual(before);
        }
      });
    }
  });

  describe("refuses a snapshot holding schema objects svc never made, with one line, changing nothing (#53 item 2)", () => {
    /** The newest snapshot, plain, with `statement` run in it. */
    const planted = (statement: string) => {
      const db = Database.deserialize(Bun.gunzipSync(readFileSync(join(backups, snapshots().at(-1)!))));
      db.run(statement);
      const bytes = db.serialize();
      db.close();
      return bytes;
    };
    const cases: [string, string, string][] = [
      [
        "a trigger making every sign-up an administrator",
        "CREATE TRIGGER everyone_admin AFTER INSERT ON users BEGIN UPDATE users SET role = 'admin' WHERE id = NEW.id; END",
        'it holds trigger "everyone_admin" on users, which svc does not make',
      ],
      ["a table", "CREATE TABLE loot (x text)", 'it holds table "loot", which svc does not make'],
      [
        "a view",
        "CREATE VIEW hashes AS SELECT password_hash FROM users",
        'it holds view "hashes", which svc does not make',
      ],
      [
        "one of svc's triggers changed",
        "DROP TRIGGER users_insert_version; CREATE TRIGGER users_insert_version AFTER INSERT ON users BEGIN UPDATE users SET role = 'admin' WHERE id = NEW.id; END",
        'its trigger "users_insert_version" on users is not as svc makes it',
      ],
      [
        "one of svc's indexes gone",
        "DROP INDEX users_role_status_idx",
        'it lacks index "users_role_status_idx", which svc makes',
      ],
    ];
    for (const [what, statement, why] of cases) {
      test(what, async () => {
        const file = join(dir, `planted-${what.replaceAll(" ", "-").replaceAll("'", "")}.db`);
        writeFileSync(file, planted(statement));
        for (const force of [false, true]) {
          const { path, env } = freshBox();
          if (force) {
            mkdirSync(join(path, ".."), { recursive: true });
            copyFileSync(live, path);
          }
          const before = force ? readFileSync(path) : null;
          const refused = await cli(["restore", "--from", file, ...(force ? ["--force"] : [])], env);
          expect(refused).toEqual({
            code: 1,
            out: "",
            err: `svc restore: ${file} is not a sound svc database: ${why}; nothing was changed\n`,
          });
          expect(readdirSync(join(path, "..", ".."))).toEqual(force ? ["data"] : []);
          if (before) expect(readFileSync(path)).toEqual(before);
        }
        // svc check says the same of such a database in place, exit 1.
        expect(await cli(["check"], { SVC_DATABASE_URL: `sqlite:${file}` })).toEqual({
          code: 1,
          out: "",
          err: `svc check: sqlite:${file}: ${why}\n`,
        });
      });
    }

    test("a snapshot an earlier svc took, with fewer migrations, is restored and checked as that svc made it", async () => {
      const older = join(dir, "older.db");
      const db = new Database(older, { create: true, strict: true });
      // As Drizzle's migrator (svc 0.1.x) left it, its table written over several lines, and no svc record;
      // up to 0007, the first with every table a restore counts.
      db.run(`CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (
				id SERIAL PRIMARY KEY,
				hash text NOT NULL,
				created_at numeric
			)`);
      for (const migration of embeddedMigrations("sqlite").slice(0, 8)) {
        for (const statement of migration.sql) db.run(statement);
        db.run('INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)', [
          migration.hash,
          migration.folderMillis,
        ]);
      }
      db.close();
      const { env } = freshBox();
      expect(await cli(["restore", "--from", older], env)).toMatchObject({ code: 0, err: "" });
      const planted = new Database(older, { strict: true });
      planted.run("CREATE TABLE loot (x text)");
      planted.close();
      expect(await cli(["restore", "--from", older], freshBox().env)).toMatchObject({
        code: 1,
        err: `svc restore: ${older} is not a sound svc database: it holds table "loot", which svc does not make; nothing was changed\n`,
      });
    });
  });

  test("names what it cannot find", async () => {
    const { env } = freshBox();
    const missing = await cli(["restore", "--from", join(dir, "nope.db.gz")], env);
    expect(missing.err).toBe(`svc restore: no file at ${join(dir, "nope.db.gz")}; nothing was changed\n`);
    const none = await cli(["restore", "--from", join(dir, "empty-folder", "latest")], env);
    expect(none.err).toBe(`svc restore: no svc snapshots at ${join(dir, "empty-folder")}; nothing was changed\n`);
    expect((await cli(["restore"], env)).code).toBe(2);
    expect((await cli(["restore", "--from", "gs://bucket/x"], env)).code).toBe(1);
  });
});

function otherDatabase(): Uint8Array {
  const db = new Database(":memory:");
  db.run("CREATE TABLE notes (text TEXT)");
  db.run("INSERT INTO notes VALUES ('hello')");
  const bytes = db.serialize();
  db.close();
  return bytes;
}

describe("two databases backing up to one folder", () => {
  const shared = join(dir, "shared");
  /** A second database, as a second svc would make it, with its own user. */
  async function another(name: string): Promise<string> {
    const path = join(dir, name, "svc.db");
    const other = await openSqliteStore(path);
    await (await testApp({ on: other })).signUp(`${name}-user`);
    await other.close();
    return path;
  }
  const identity = (path: string) =>
    new Database(path, { readonly: true }).query<{ id: string }, []>("SELECT id FROM svc_database").get()!.id;
  const sharedSnapshots = () => readdirSync(shared).sort();
  /** A copy of the database at `path` in a fresh box: the same database, as a box restoring it has it. */
  function copyOf(path: string) {
    const box = freshBox();
    mkdirSync(join(box.path, ".."), { recursive: true });
    copyFileSync(path, box.path);
    return box;
  }

  test("each keeps SVC_BACKUP_KEEP of its own, and latest restores its own; only others' there: one line naming them", async () => {
    const one = await another("one");
    const two = await another("two");
    expect(identity(one)).not.toBe(identity(two));
    const env = (path: string) => ({ SVC_DATABASE_URL: `sqlite:${path}`, SVC_BACKUP_TO: shared, SVC_BACKUP_KEEP: "1" });
    expect((await cli(["backup", "--now"], env(one))).code).toBe(0);
    const two_ = await cli(["backup", "--now"], env(two));
    expect(two_).toMatchObject({ code: 0, err: "" });
    expect(two_.out).not.toContain("deleted");
    const names = sharedSnapshots();
    expect(names).toHaveLength(2);
    expect(names.filter((name) => name.includes(identity(one)))).toHaveLength(1);
    expect(names.filter((name) => name.includes(identity(two)))).toHaveLength(1);
    const listed = await cli(["backup", "--list"], env(one));
    expect(listed.out.split("\n")[0]).toBe("name\tbytes\ttaken\tversion\tdatabase");

    // The newest there is two's; one's copy gets one's.
    const box = copyOf(one);
    const restored = await cli(["restore", "--from", join(shared, "latest"), "--force"], box.env);
    expect(restored).toMatchObject({ code: 0, err: "" });
    expect(restored.out).toContain(`from ${shared}/${names.find((name) => name.includes(identity(one)))}`);
    expect(rows(box.path)).toEqual(rows(one));
    expect(identity(box.path)).toBe(identity(one));

    // A third database: none of those are its own.
    const third = copyOf(live);
    const before = readFileSync(third.path);
    const refused = await cli(["restore", "--from", join(shared, "latest"), "--force"], third.env);
    expect(refused).toEqual({
      code: 1,
      out: "",
      err: `svc restore: ${shared} holds no snapshot of this database (${identity(live)}), only of ${[identity(one), identity(two)].sort().join(", ")}: name the one to restore (svc backup --list shows them), e.g. --from ${shared}/${names.at(-1)}; nothing was changed\n`,
    });
    expect(readFileSync(third.path)).toEqual(before);
    // No database there yet: which one is meant cannot be told either.
    const empty = freshBox();
    const unknown = await cli(["restore", "--from", join(shared, "latest")], empty.env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toStartWith(`svc restore: ${shared} holds snapshots of 2 databases (`);
    // Named, any of them restores.
    const named = await cli(["restore", "--from", join(shared, names[0]!)], empty.env);
    expect(named.code).toBe(0);
  });
});
