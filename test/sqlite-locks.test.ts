// svc keeps every lock SQLite takes on its database: while svc serves a file, another process (an
// administrator's `svc user promote`, a second instance) must see the file and its WAL index in use.
// A lost lock lets that process take the WAL index for unused: it truncates and rebuilds the -shm file
// under svc, whose next read of the mapping kills it with SIGBUS (seen in CI), and whose view of the
// WAL no longer matches the file's.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { Database, constants } from "bun:sqlite";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/db/open.ts";
import { openSqliteConnection } from "../src/db/sqlite/connection.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { lockHolder, SQLITE_LOCKS } from "./support/posix-locks.ts";

let dir: string;
let store: VersionedStore | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-sqlite-locks-"));
});

afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function expectHeldByThisProcess(path: string) {
  const { shared, walIndexInUse } = SQLITE_LOCKS;
  expect(await lockHolder(path, shared.start, shared.length)).toEqual({ type: "read", pid: process.pid });
  expect(await lockHolder(`${path}-shm`, walIndexInUse.start, walIndexInUse.length)).toEqual({
    type: "read",
    pid: process.pid,
  });
}

test("a new database served: the file and its WAL index stay locked as in use", async () => {
  const path = join(dir, "svc.db");
  store = await openStore({ kind: "sqlite", path });
  await store.users.create({
    id: Bun.randomUUIDv7(),
    username: "ann",
    email: "ann@example.com",
    passwordHash: "h",
    createdAt: new Date().toISOString(),
  });
  await expectHeldByThisProcess(path);
});

test("an existing database served again, with and without a WAL index left beside it: locked as in use", async () => {
  const path = join(dir, "svc.db");
  store = await openStore({ kind: "sqlite", path });
  await store.close();
  // Closed, the store let go of the file at once: SQLite folded the WAL in and removed it and its index.
  expect(readdirSync(dir).sort()).toEqual(["svc.db"]);
  store = await openStore({ kind: "sqlite", path });
  await expectHeldByThisProcess(path);
  // A second store of this process on the same file (as tests and the copy command do).
  const second = await openStore({ kind: "sqlite", path });
  try {
    await expectHeldByThisProcess(path);
  } finally {
    await second.close();
  }
  await expectHeldByThisProcess(path);
  await store.close();
  store = undefined;
  // A WAL and its index left by a process that stopped without removing them (killed, or set to keep them).
  const left = new Database(path, { readwrite: true });
  left.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  left.query("SELECT count(*) FROM users").get();
  left.close(true);
  expect(readdirSync(dir).sort()).toEqual(["svc.db", "svc.db-shm", "svc.db-wal"]);
  store = await openStore({ kind: "sqlite", path });
  await expectHeldByThisProcess(path);
});

test("the mapping that spares SQLite's locks still shows the WAL index as every commit rewrites it", async () => {
  const path = join(dir, "svc.db");
  const connection = openSqliteConnection(path);
  try {
    const header = connection.walIndex?.header;
    expect(header).toBeDefined();
    const onDisk = () => new Uint32Array(readFileSync(`${path}-shm`).buffer.slice(0, 96));
    expect([...header!]).toEqual([...onDisk()]);
    const before = [...header!];
    connection.client.run("UPDATE table_versions SET version = version + 1 WHERE name = 'users'");
    expect([...header!]).not.toEqual(before);
    expect([...header!]).toEqual([...onDisk()]);
  } finally {
    connection.close();
  }
  expect(readdirSync(dir).sort()).toEqual(["svc.db"]);
});
