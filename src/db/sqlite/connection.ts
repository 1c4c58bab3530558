// An SQLite file opened the way svc serves from it: checked for damage, WAL and full sync, migrated.
// Plain bun:sqlite, no Drizzle: `svc serve` opens this, answers the health probes from it, and only
// then loads the store's code (store.ts) around the same connection.
import { Database } from "bun:sqlite";
import { dirname, resolve } from "node:path";
import { nodeFs } from "../../process/node-fs.ts";
import { storageMonitor, type StorageMonitor, volumeFull } from "../storage.ts";
import { DamagedDatabase, NoSuchDatabase, type OpenOptions } from "../store.ts";
import { mapWalIndex, type WalIndex } from "./commits.ts";
import { createPrivateFile, firstDamage, makePrivateFolder, missingSqlite, utcStamp } from "./file.ts";
import { behindSqlite, migrateSqlite, refuseNewerSqlite } from "./migrate.ts";
import { emptyMemoryDatabase, placeImage } from "./new-database.ts";

/** The largest file checked for damage at start: about 3,000,000 users, some 1.5 s of reading. */
const START_CHECK_MAX_BYTES = 1024 ** 3;

export interface SqliteConnection {
  readonly client: Database;
  readonly path: string;
  /** What `PRAGMA journal_mode = WAL` left: "wal", except for an in-memory database ("memory"). */
  readonly journalMode: string;
  /** The WAL index, mapped before SQLite locked it (commits.ts); null for an in-memory database. */
  readonly walIndex: WalIndex | null;
  readonly storage: StorageMonitor;
  /** Whether the database answers a statement: the health probes' check. */
  ping(): Promise<void>;
  storageState(): ReturnType<StorageMonitor["state"]>;
  /** How many active administrators there are: the store's users.activeAdmins, before the store has loaded. */
  activeAdmins(): number;
  /** Frees what the page cache holds (up to 2 MB after a burst); the next reads fill it again from the file. */
  releaseMemory(): void;
  /** Closes the connection, finalizing its statements. */
  close(): void;
}

/** Opens (creating if needed, unless `existing`) and migrates the database at `path`, or an in-memory one for ":memory:". */
export function openSqliteConnection(
  path: string,
  { existing = false, onSetAside, onUpgrade }: OpenOptions = {},
): SqliteConnection {
  if (existing) {
    const problem = missingSqlite(path);
    if (problem) throw new NoSuchDatabase(problem);
  }
  let client: Database;
  let journalMode: string;
  let placed = false;
  try {
    if (existing) client = new Database(path, { create: false, strict: true });
    else ({ client, placed } = openOrCreate(path, onSetAside));
  } catch (error) {
    throw fullVolume(path, error);
  }
  // Before the first statement, which opens and locks the index.
  let walIndex = mapWalIndex(path);
  try {
    journalMode = prepare(client, path, existing, onUpgrade, placed);
  } catch (error) {
    client.close();
    walIndex?.release();
    throw fullVolume(path, error);
  }
  if (journalMode !== "wal") {
    walIndex?.release();
    walIndex = null;
  }
  const storage = storageMonitor(path === ":memory:" ? undefined : dirname(path));
  const select1 = client.prepare("SELECT 1");
  return {
    client,
    path,
    journalMode,
    walIndex,
    storage,
    // In-process and synchronous: it answers at once or throws, so there is nothing to time out.
    async ping() {
      select1.get();
    },
    storageState: () => storage.state(),
    activeAdmins: () =>
      client
        .query<{ n: number }, []>("SELECT count(*) AS n FROM users WHERE role = 'admin' AND status = 'active'")
        .get()!.n,
    releaseMemory: () => client.run("PRAGMA shrink_memory"),
    close() {
      try {
        // Finalizes every statement first, so SQLite lets go of the file now, not at a later collection.
        client.close(true);
      } catch {
        client.close(false);
        walIndex?.release(true);
        return;
      }
      walIndex?.release();
    },
  };
}

/** `error`, or the full volume under the database at `path` when that is why opening it failed. */
function fullVolume(path: string, error: unknown): unknown {
  return (path !== ":memory:" && volumeFull(resolve(dirname(path)), error)) || error;
}

/**
 * Checks the database and readies it to serve; returns its journal mode. Refusals come before anything
 * is written: a file without svc's tables (with `existing`), a damaged one, one a later svc migrated,
 * and with `existing`, one an earlier svc migrated (it is migrated only without). A database `placed`
 * by this start is this binary's own image, just written whole and synced, with its every migration
 * applied: it is neither damaged nor behind, so it is neither checked for damage nor migrated (some
 * 2 ms of a first start, bench/results.md "#59: the footprint"). It is still held to the newer-version
 * check: between its placing and this open, a newer svc starting beside this one may have migrated it.
 */
function prepare(
  client: Database,
  path: string,
  existing: boolean,
  onUpgrade: OpenOptions["onUpgrade"],
  placed: boolean,
): string {
  if (
    existing &&
    !client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  ) {
    throw new NoSuchDatabase(`${path} is not an svc database (it has no svc tables)`);
  }
  // A damaged page would otherwise surface as a 500 on whatever reads it. It reads the whole file
  // (about 0.5 s for 1,000,000 users), so past START_CHECK_MAX_BYTES start-up leaves it to `svc check`.
  const checked = !placed && path !== ":memory:" && Bun.file(path).size <= START_CHECK_MAX_BYTES;
  const damage = checked ? firstDamage(client) : null;
  if (damage) {
    throw new DamagedDatabase(
      `${path} is damaged (${damage}); restore it from a backup, and see \`svc check\` for the full report`,
    );
  }
  // Only serve and migrate migrate (`existing` is every other command): an older svc may be serving it.
  if (existing) {
    const behind = behindSqlite(client, path);
    if (behind) throw behind;
  } else refuseNewerSqlite(client, path);
  // WAL lets readers run beside the writer; FULL sync makes an acknowledged write survive a crash.
  const { journal_mode: journalMode } = client.query<{ journal_mode: string }, []>("PRAGMA journal_mode = WAL").get()!;
  client.run("PRAGMA synchronous = FULL");
  client.run("PRAGMA foreign_keys = ON");
  client.run("PRAGMA busy_timeout = 5000");
  if (!existing && !placed) migrateSqlite(client, path, onUpgrade);
  return journalMode;
}

/**
 * The database at `path`, made first if there is none. A new one is the empty database written whole
 * (new-database.ts); where that cannot be placed, an empty file, which the migrations fill. A log
 * left from a database that is gone is set aside first, and `onSetAside` told where once the new one is open.
 */
function openOrCreate(path: string, onSetAside: OpenOptions["onSetAside"]): { client: Database; placed: boolean } {
  if (path === ":memory:") return { client: emptyMemoryDatabase(), placed: false };
  try {
    return { client: new Database(path, { create: false, strict: true }), placed: false };
  } catch {
    // Not there yet, most likely: placing the empty database tells, and the long way below fails,
    // if it must, in the system's or SQLite's own words (permissions, a full disk, a damaged header).
  }
  const moved = nodeFs().existsSync(path) ? [] : setAsideLeftovers(path);
  const placed = placeImage(path) === "placed";
  const client = placed ? new Database(path, { create: false, strict: true }) : create(path);
  if (moved.length > 0) onSetAside?.(moved);
  return { client, placed };
}

/**
 * With no database at `path`, a WAL or rollback journal beside it is what a database that is gone left
 * (a crash, then the file deleted or moved without them), and SQLite would replay it into the new one:
 * the gone database's rows would come back into it, or its pages would damage it. Each is renamed
 * aside, kept for whoever wants it, and its names are returned; the WAL's index goes with it, being
 * only an index. (Two svc making the database at the same instant could still both see the log;
 * only one moves it, and neither replays it.)
 */
function setAsideLeftovers(path: string): string[] {
  const fs = nodeFs();
  const stamp = utcStamp();
  const moved: string[] = [];
  for (const leftover of [`${path}-wal`, `${path}-journal`]) {
    const aside = `${leftover}.orphaned-${stamp}`;
    try {
      fs.renameSync(leftover, aside);
      moved.push(aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  if (moved.length > 0) fs.rmSync(`${path}-shm`, { force: true });
  return moved;
}

function create(path: string): Database {
  // SQLite makes files, not folders: the first start in an empty folder has no data/ yet.
  makePrivateFolder(dirname(path));
  // Empty, it is an empty database; made here, it is the owner's alone, where SQLite makes it 0644.
  createPrivateFile(path, false);
  return new Database(path, { create: true, strict: true });
}
