// Whether a process has an SQLite database open, svc serving it most likely, so that a restore does not
// pull the file from under it. Cheap and exact on one box: a connection in SQLite's exclusive locking
// mode cannot begin while any other connection has the file open in WAL mode (as svc always has it).
import { openExisting } from "../db/sqlite/file.ts";
import { isLockedElsewhere } from "./lock.ts";

export function isOpenElsewhere(path: string): boolean {
  if (isLockedElsewhere(path)) return true;
  const client = openExisting(path);
  if (!client) return false;
  try {
    client.run("PRAGMA busy_timeout = 0");
    client.run("PRAGMA locking_mode = EXCLUSIVE");
    client.run("BEGIN EXCLUSIVE");
    client.run("COMMIT");
    return false;
  } catch (error) {
    // Anything but "locked" (a damaged file, not a database at all) is no sign of a user.
    return /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown }).code));
  } finally {
    client.close();
  }
}
