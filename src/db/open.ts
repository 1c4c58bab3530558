// Opens the store SVC_DATABASE_URL names, migrated and ready. Each database's code is imported when it
// is the one in use: svc on SQLite never loads the PostgreSQL driver's code, nor the other way round.
import type { DatabaseConfig } from "../config.ts";
import type { OpenOptions, VersionedStore } from "./store.ts";

export { describeDatabase } from "./describe.ts";

export async function openStore(database: DatabaseConfig, options: OpenOptions = {}): Promise<VersionedStore> {
  if (database.kind === "sqlite") return (await import("./sqlite/store.ts")).openSqliteStore(database.path, options);
  return (await import("./postgres/store.ts")).openPostgresStore(database, options);
}
