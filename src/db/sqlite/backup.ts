// A consistent snapshot of a live SQLite database: VACUUM INTO reads inside one transaction, so it
// sees one moment even while svc keeps writing, and writes a compact copy.
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { missingSqlite } from "./file.ts";

export function backupSqlite(path: string, target: string): void {
  const missing = missingSqlite(path);
  if (missing) throw new Error(missing);
  if (existsSync(target)) throw new Error(`${target} already exists; choose a new file`);
  const db = new Database(path, { readonly: true });
  try {
    db.run("VACUUM INTO ?", [target]);
  } finally {
    db.close();
  }
}
