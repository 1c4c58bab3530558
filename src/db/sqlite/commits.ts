// Whether anything has been committed to a SQLite database since a mark: by this process or any other
// sharing the file (SVC_REUSE_PORT, an administrator's `svc user promote`), without a statement. In WAL
// mode every commit rewrites the header of the WAL index, the -shm file all connections share through
// mmap: the frame count grows and the change counter moves on each commit, and a restarted WAL gets new
// salts. So while the header reads as it did at a mark, the database holds exactly what it held then.
// Reading it costs far less than the cheapest statement, PRAGMA data_version (bench/results.md,
// "Measured by hand").
//
// https://www.sqlite.org/walformat.html: the header is two 48-byte copies at the start of the file,
// written by the committer copy 2 first, copy 1 last.
//
// The mapping is taken before this process's SQLite opens the file, never after. Bun.mmap opens the file,
// maps it and closes it, and closing any descriptor of a file drops every POSIX lock the process holds on
// it: SQLite's among them, the read lock that tells other processes the WAL index is in use. Without it,
// the next process to open the database (a `svc user promote`) took the index for abandoned, truncated
// and rebuilt it under svc, and svc died of SIGBUS on its next read of the mapping (CI, 2026-11-29;
// test/sqlite-locks.test.ts). One mapping per database per process, for the same reason.
import { constants } from "bun:sqlite";
import { resolve } from "node:path";
import { openExisting } from "./file.ts";

/** Bytes of the WAL-index header: both copies. */
const HEADER_BYTES = 96;

export interface WalIndex {
  /** The header's 24 words, as the file holds them at each read. */
  readonly header: Uint32Array;
  /**
   * One user fewer, once its connection is closed; the mapping goes with the process's last. `lingers`:
   * the connection could not close at once and SQLite may hold the file until the collector finalizes
   * it, so this process never maps it again (it would drop those locks): its later connections go without.
   */
  release(lingers?: boolean): void;
}

/** The mappings of this process, by database path, with how many connections use each. */
const mapped = new Map<string, { header: Uint32Array; users: number }>();
/** Databases a connection of this process may still hold after an unfinished close. */
const lingering = new Set<string>();

/**
 * The WAL index of the database file at `databasePath`, mapped; null when it cannot be (an in-memory
 * database, a file not in WAL mode). Call it after opening the connection and before its first
 * statement: SQLite opens the index (and locks it) at the first read.
 */
export function mapWalIndex(databasePath: string): WalIndex | null {
  if (databasePath === ":memory:") return null;
  const key = resolve(databasePath);
  if (lingering.has(key)) return null;
  let entry = mapped.get(key);
  if (!entry) {
    // Another connection of this process holding the file would lose its locks here: the map above
    // answers for it, and svc opens its database nowhere else while a store has it.
    const header = mapHeader(databasePath) ?? (leaveWalIndex(databasePath) ? mapHeader(databasePath) : null);
    if (!header) return null;
    entry = { header, users: 0 };
    mapped.set(key, entry);
  }
  entry.users++;
  const held = entry;
  let released = false;
  return {
    header: held.header,
    release(lingers = false) {
      if (released) return;
      released = true;
      if (lingers) lingering.add(key);
      if (--held.users === 0 && mapped.get(key) === held) mapped.delete(key);
    },
  };
}

function mapHeader(databasePath: string): Uint32Array | null {
  try {
    const bytes = Bun.mmap(`${databasePath}-shm`, { shared: true });
    if (bytes.byteLength < HEADER_BYTES) return null;
    return new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_BYTES / 4);
  } catch {
    // None there yet (or not readable): the caller makes one, or goes without.
    return null;
  }
}

/**
 * Has SQLite make the -shm file (with the database's mode and owner, as it makes it) and leave it at
 * close, so that it can be mapped before the serving connection locks it: a connection reads once with
 * SQLITE_FCNTL_PERSIST_WAL set, and closes. False when it could not (not a WAL database, or none).
 */
function leaveWalIndex(databasePath: string): boolean {
  const client = openExisting(databasePath);
  if (!client) return false;
  try {
    client.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
    client.query("SELECT 1 FROM sqlite_master LIMIT 1").get();
    return true;
  } catch {
    return false;
  } finally {
    client.close(true);
  }
}

export interface Commits {
  /** True while nothing has been committed since the last mark(). */
  unchangedSinceMark(): boolean;
  /** Remembers the header as it reads now. Take it before a read whose answer is then kept. */
  mark(): void;
  /** Stops reading the file: before the connection closes (SQLite may remove or truncate it after). */
  close(): void;
}

/**
 * Watches the WAL index mapped by mapWalIndex; null without one, in which case nothing may be kept
 * between statements.
 */
export function watchCommits(walIndex: WalIndex | null): Commits | null {
  if (!walIndex) return null;
  const { header } = walIndex;
  const marked = new Uint32Array(HEADER_BYTES / 4);
  // Never equal to a header: the first check fails until the first mark.
  marked[0] = 0xffffffff;
  let open = true;
  return {
    unchangedSinceMark() {
      if (!open) return false;
      for (let i = 0; i < marked.length; i++) if (header[i] !== marked[i]) return false;
      return true;
    },
    mark() {
      if (open) marked.set(header);
    },
    close() {
      open = false;
    },
  };
}
