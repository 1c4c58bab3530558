// `svc backup`: a consistent snapshot of the live database (snapshot.ts), while svc keeps serving.
import { Database } from "bun:sqlite";
import { missingSqlite } from "./file.ts";
import { refuseNewerSqlite } from "./migrate.ts";
import { snapshotInto } from "./snapshot.ts";

/** The database at `path`, as it is now, into the new file `target`; refused for one a later svc migrated. */
export function backupSqlite(path: string, target: string): void {
  const missing = missingSqlite(path);
  if (missing) throw new Error(missing);
  const db = new Database(path, { readonly: true });
  try {
    refuseNewerSqlite(db, path);
    snapshotInto(db, target);
  } finally {
    db.close();
  }
}
