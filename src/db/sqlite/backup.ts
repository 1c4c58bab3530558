// A consistent snapshot of a live SQLite database: VACUUM INTO reads inside one transaction, so it
// sees one moment even while svc keeps writing, and writes a compact copy.
import { Database } from "bun:sqlite";
import { nodeFs } from "../../node-fs.ts";
import { createPrivateFile, missingSqlite } from "./file.ts";

/** `svc backup`: the database at `path`, as it is now, into the new file `target`. */
export function backupSqlite(path: string, target: string): void {
  const missing = missingSqlite(path);
  if (missing) throw new Error(missing);
  const db = new Database(path, { readonly: true });
  try {
    snapshotInto(db, target);
  } finally {
    db.close();
  }
}

/**
 * Writes what `client` reads now into `target`, a new file of mode 0600 (VACUUM INTO fills an empty
 * file, and would make one 0644). An error, and no file, when anything is there already.
 */
export function snapshotInto(client: Database, target: string): void {
  try {
    createPrivateFile(target, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      throw new Error(`${target} already exists; choose a new file`);
    throw error;
  }
  try {
    client.run("VACUUM INTO ?", [target]);
  } catch (error) {
    nodeFs().rmSync(target, { force: true });
    throw error;
  }
}
