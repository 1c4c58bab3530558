// svc's own files are its owner's alone (0600): the database with its WAL and shared-memory files, a
// backup, the snapshot taken before migrating. Accounts, password hashes and sessions are in them.
// The folders svc makes for them are 0700, whatever the umask: another user must not swap svc.db.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/open.ts";
import { newUser } from "./store/conformance.ts";
import { captureCli } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-modes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

async function cli(argv: string[], url: string) {
  const { code, err } = await captureCli(argv, { SVC_DATABASE_URL: url });
  return { code, err };
}

/** Opens the database as `svc serve` does, writes a row (so the WAL and its index exist), and leaves it open. */
async function served(path: string) {
  const opened = await openDatabase({ kind: "sqlite", path });
  const store = await opened.store();
  await store.users.create(newUser("ann"));
  return opened;
}

describe("files svc makes are 0600", () => {
  test("a new database, its -wal and its -shm", async () => {
    const path = join(dir, "new", "svc.db");
    const opened = await served(path);
    expect([mode(path), mode(`${path}-wal`), mode(`${path}-shm`)]).toEqual(["600", "600", "600"]);
    await opened.close();
  });

  test("a new database made the long way, where the empty database's image cannot be placed", async () => {
    const path = join(dir, "long-way", "svc.db");
    // A folder where the image's scratch file would go: writing it fails, and SQLite makes the file.
    mkdirSync(`${path}.${process.pid}.new`, { recursive: true });
    const opened = await served(path);
    expect([mode(path), mode(`${path}-wal`), mode(`${path}-shm`)]).toEqual(["600", "600", "600"]);
    await opened.close();
  });

  test("svc migrate's new database and svc backup's snapshot", async () => {
    const path = join(dir, "cli", "svc.db");
    expect(await cli(["migrate"], `sqlite:${path}`)).toEqual({ code: 0, err: "" });
    expect(mode(path)).toBe("600");
    const opened = await served(path);
    const backup = join(dir, "cli", "backup.db");
    expect(await cli(["backup", backup], `sqlite:${path}`)).toEqual({ code: 0, err: "" });
    expect(mode(backup)).toBe("600");
    await opened.close();
  });
});

describe("folders svc makes are 0700, whatever the umask (#53 item 14)", () => {
  /** Runs `work` under umask 000, the widest, putting the process's umask back after. */
  async function underUmask000<T>(work: () => Promise<T>): Promise<T> {
    const before = process.umask(0);
    try {
      return await work();
    } finally {
      process.umask(before);
    }
  }

  test("the data folder serve makes, and every parent it makes", async () => {
    const path = join(dir, "umask-serve", "data", "svc.db");
    const opened = await underUmask000(() => served(path));
    await opened.close();
    expect([mode(join(dir, "umask-serve")), mode(join(dir, "umask-serve", "data")), mode(path)]).toEqual([
      "700",
      "700",
      "600",
    ]);
  });

  test("svc migrate's data folder", async () => {
    const path = join(dir, "umask-migrate", "data", "svc.db");
    expect(await underUmask000(() => cli(["migrate"], `sqlite:${path}`))).toEqual({ code: 0, err: "" });
    expect([mode(join(dir, "umask-migrate")), mode(join(dir, "umask-migrate", "data"))]).toEqual(["700", "700"]);
  });

  test("svc restore's data folder", async () => {
    const source = join(dir, "umask-source.db");
    expect(await cli(["migrate"], `sqlite:${source}`)).toEqual({ code: 0, err: "" });
    const path = join(dir, "umask-restore", "data", "svc.db");
    const restored = await underUmask000(() => cli(["restore", "--from", source], `sqlite:${path}`));
    expect(restored).toEqual({ code: 0, err: "" });
    expect([mode(join(dir, "umask-restore")), mode(join(dir, "umask-restore", "data"))]).toEqual(["700", "700"]);
  });
});
