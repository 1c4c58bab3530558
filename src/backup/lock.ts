// Which svc process takes the scheduled backups when several share one database file (SVC_REUSE_PORT on
// one box, or by mistake): the one holding an exclusive lock on a small file beside the database,
// `<database>.backup-lock`. A lock rather than a lease row in the database: the kernel drops it the moment
// its holder dies (even killed -9), so another instance takes over at its next scheduled run, with no
// expiry to wait out or to guess, no clock to trust, no migration, and no write to the database the
// backup reads. The lock is SQLite's own (an open EXCLUSIVE transaction on an empty database file):
// POSIX advisory locks, which SQLite keeps right between connections of one process too. Like SQLite
// itself it needs a local file system, not a network share.
import { Database } from "bun:sqlite";
import { createPrivateFile } from "../db/sqlite/file.ts";
import { nodeFs } from "../process/node-fs.ts";

export interface BackupLock {
  /** True when this process holds the lock, taking it now if it is free. */
  hold(): boolean;
  release(): void;
}

export function lockPath(databasePath: string): string {
  return `${databasePath}.backup-lock`;
}

export function backupLock(databasePath: string): BackupLock {
  let held: Database | null = null;
  return {
    hold() {
      if (held) return true;
      const path = lockPath(databasePath);
      createPrivateFile(path, false);
      held = tryLock(path);
      return held !== null;
    },
    release() {
      held?.close();
      held = null;
    },
  };
}

/** Whether another process holds the backup lock of the database at `databasePath` (svc serving it with a schedule). */
export function isLockedElsewhere(databasePath: string): boolean {
  const path = lockPath(databasePath);
  if (!nodeFs().existsSync(path)) return false;
  const lock = tryLock(path);
  lock?.close();
  return lock === null;
}

/** The lock, held by the returned connection until it closes; null when another holds it. */
function tryLock(path: string): Database | null {
  const client = new Database(path, { create: false });
  try {
    client.run("PRAGMA busy_timeout = 0");
    // Nothing is written: no rollback journal file beside it either.
    client.run("PRAGMA journal_mode = MEMORY");
    client.run("BEGIN EXCLUSIVE");
    return client;
  } catch {
    client.close();
    return null;
  }
}
