// Whether anything has been committed to a SQLite database since a mark: by this process or any other
// sharing the file (SVC_REUSE_PORT), without a statement. In WAL mode every commit rewrites the header
// of the WAL index, the -shm file all connections share through mmap: the frame count grows and the
// change counter moves on each commit, and a restarted WAL gets new salts. So while the header reads as
// it did at a mark, the database holds exactly what it held then. Reading it costs far less than the
// cheapest statement, PRAGMA data_version (bench/results.md, "Measured by hand").
//
// https://www.sqlite.org/walformat.html: the header is two 48-byte copies at the start of the file,
// written by the committer copy 2 first, copy 1 last.

/** Bytes of the WAL-index header: both copies. */
const HEADER_BYTES = 96;

export interface Commits {
  /** True while nothing has been committed since the last mark(). */
  unchangedSinceMark(): boolean;
  /** Remembers the header as it reads now. Take it before a read whose answer is then kept. */
  mark(): void;
  /** Stops reading the file: before the connection closes (SQLite may remove or truncate it after). */
  close(): void;
}

/**
 * Watches the -shm file of a database opened in WAL mode; null when there is none (an in-memory
 * database, or a journal mode other than WAL), in which case nothing may be kept between statements.
 *
 * The file stays mapped only while svc's own connection is open: SQLite truncates or removes it only
 * when no connection holds it, and a truncated mapping would crash the process on its next read.
 */
export function watchCommits(databasePath: string, journalMode: string): Commits | null {
  if (databasePath === ":memory:" || journalMode.toLowerCase() !== "wal") return null;
  let header: Uint32Array;
  try {
    const mapped = Bun.mmap(`${databasePath}-shm`, { shared: true });
    if (mapped.byteLength < HEADER_BYTES) return null;
    header = new Uint32Array(mapped.buffer, mapped.byteOffset, HEADER_BYTES / 4);
  } catch {
    return null;
  }
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
