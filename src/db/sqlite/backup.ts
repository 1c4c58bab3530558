// A consistent snapshot of a live SQLite database: VACUUM INTO reads inside one transaction, so it
// sees one moment even while svc keeps writing, and writes a compact copy.
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";

export function backupSqlite(path: string, target: string): void {
  if (path === ":memory:") throw new Error("an in-memory database has nothing to back up");
  if (!existsSync(path)) throw new Error(`no database at ${path}`);
  if (existsSync(target)) throw new Error(`${target} already exists; choose a new file`);
  const db = new Database(path, { readonly: true });
  try {
    db.run("VACUUM INTO ?", [target]);
  } finally {
    db.close();
  }
}
