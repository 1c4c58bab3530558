// Where the data lives, in words safe to log: no password, no query string.
import { resolve } from "node:path";
import type { DatabaseConfig } from "../config/index.ts";

/** A file by its full path: the same relative path names another file in another folder. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === "sqlite") return `sqlite:${database.path === ":memory:" ? ":memory:" : resolve(database.path)}`;
  const url = new URL(database.url);
  return `postgres://${url.username ? `${url.username}@` : ""}${url.host}${url.pathname}`;
}
