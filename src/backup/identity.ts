// A database file's identity as backups go by it (svc_database, src/db/category-events.ts), and the new epoch a
// restored snapshot gets, read and written with bun:sqlite alone: `svc restore` and `svc backup --now` load no store.
import { Database } from "bun:sqlite";
import { newIdentity } from "../db/identity.ts";
import { nodeFs } from "../process/node-fs.ts";

/**
 * The identity of the SQLite database at `path`; null when there is none to read (no file, not svc's, damaged).
 * With `tidy`, for a database no process has open (svc restore checks), read without a trace: the log and index
 * files SQLite makes beside a database in WAL mode to read it go again. Never for one svc may be serving: its
 * -shm is in use.
 */
export function databaseIdentity(path: string, { tidy = false } = {}): string | null {
  const fs = nodeFs();
  const made = tidy ? ["-wal", "-shm"].map((suffix) => `${path}${suffix}`).filter((file) => !fs.existsSync(file)) : [];
  let client: Database;
  try {
    client = new Database(path, { readonly: true });
  } catch {
    return null;
  }
  try {
    return client.query<{ id: string }, []>("SELECT id FROM svc_database ORDER BY id LIMIT 1").get()?.id ?? null;
  } catch {
    return null;
  } finally {
    client.close();
    // A -shm is only an index; a -wal SQLite made to read is empty.
    for (const file of made)
      if (file.endsWith("-shm") || (fs.existsSync(file) && fs.statSync(file).size === 0))
        fs.rmSync(file, { force: true });
  }
}

/**
 * Gives the database at `path` (a restored snapshot, before it takes the database's name) a new event-log epoch:
 * its event numbers go on from the snapshot's, which the database it replaces may have given out already, so a
 * cursor from then must get RESYNC, not resume. Its identity stays: it is the same database. A snapshot older
 * than epochs needs none: its migration makes one.
 */
export function renewEpochOf(path: string): void {
  const client = new Database(path, { readwrite: true, create: false });
  try {
    const columns = client.query<{ name: string }, []>("SELECT name FROM pragma_table_info('svc_database')").all();
    if (columns.some(({ name }) => name === "epoch")) client.run("UPDATE svc_database SET epoch = ?", [newIdentity()]);
  } finally {
    client.close();
  }
}
