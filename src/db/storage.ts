// Whether the database has room to write: what the health check reports while a full volume turns
// writes into 503 storage_full and reads go on. Each store tells it when a write failed for want of
// space; an SQLite store can also look at its volume's free space.
import { nodeFs } from "../process/node-fs.ts";
import { AppError } from "../errors/index.ts";

export type StorageState = "ok" | "full";

/** How long after a write failed for want of space the storage counts as full. */
export const FULL_REMEMBERED_MS = 5000;
/** Below this much free space an SQLite volume counts as full: SQLite writes whole pages and WAL frames. */
const MIN_FREE_BYTES = 1024 * 1024;

export interface StorageMonitor {
  /** A write failed for want of space; returns the error to throw in its place. */
  full(cause: unknown): AppError;
  state(): StorageState;
}

/** `directory`: where an SQLite file lives, whose volume's free space also counts. */
export function storageMonitor(directory?: string, now = () => Date.now()): StorageMonitor {
  let failedAt = -Infinity;
  return {
    full(cause) {
      failedAt = now();
      return new AppError("storage_full", "The database's storage is full: nothing was written. Reads still work.", {
        cause,
      });
    },
    state() {
      if (now() - failedAt < FULL_REMEMBERED_MS) return "full";
      return directory !== undefined && freeBytes(directory) < MIN_FREE_BYTES ? "full" : "ok";
    },
  };
}

/** Opening or reading a database failed for want of space on its volume: nothing says the file is damaged. */
export class VolumeFull extends Error {
  override name = "VolumeFull";
}

/**
 * The failure to open or read a database in `directory` as the full volume it is, when it is one:
 * SQLite's "full", or an I/O error (SQLite could not write the log's index a reader needs) while the
 * volume has less free than SQLite writes at once. Null for anything else, which is then said as it is.
 */
export function volumeFull(directory: string, error: unknown): VolumeFull | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !/^SQLITE_(FULL|IOERR|CANTOPEN)/.test(code)) return null;
  const free = freeBytes(directory);
  if (free >= MIN_FREE_BYTES && !code.startsWith("SQLITE_FULL")) return null;
  return new VolumeFull(
    // Without SQLite's words as its cause: "disk I/O error" is what read as damage.
    `${fullDiskText(directory, free)}: free space there, then try again (no sign of damage: do not restore the database)`,
  );
}

/** Whether writing a file failed for want of space (the system's ENOSPC, a quota's EDQUOT, SQLite's FULL). */
export function outOfSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^(ENOSPC|EDQUOT|SQLITE_FULL)/.test(code);
}

/** "the disk holding <directory> is full (<n> bytes free)", as every full-disk message begins. */
export function fullDiskText(directory: string, free = freeBytes(directory)): string {
  return `the disk holding ${directory} is full${Number.isFinite(free) ? ` (${free} bytes free)` : ""}`;
}

function freeBytes(directory: string): number {
  try {
    const { bavail, bsize } = nodeFs().statfsSync(directory);
    return bavail * bsize;
  } catch {
    // Cannot look: only failed writes tell.
    return Infinity;
  }
}
