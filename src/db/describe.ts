// Where the data lives, in words safe to log: no password, no query string.
import type { DatabaseConfig } from "../config.ts";

export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === "sqlite") return `sqlite:${database.path}`;
  const url = new URL(database.url);
  return `postgres://${url.username ? `${url.username}@` : ""}${url.host}${url.pathname}`;
}
