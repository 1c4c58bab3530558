// Opens the store SVC_DATABASE_URL names, migrated and ready.
import type { DatabaseConfig } from "../config.ts";
import { openPostgresStore } from "./postgres/store.ts";
import { openSqliteStore } from "./sqlite/store.ts";
import type { OpenOptions, VersionedStore } from "./store.ts";

export async function openStore(database: DatabaseConfig, options: OpenOptions = {}): Promise<VersionedStore> {
  return database.kind === "sqlite" ? openSqliteStore(database.path, options) : openPostgresStore(database, options);
}

/** Where the data lives, safe to log. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === "sqlite") return `sqlite:${database.path}`;
  const url = new URL(database.url);
  return `postgres://${url.username ? `${url.username}@` : ""}${url.host}${url.pathname}`;
}
