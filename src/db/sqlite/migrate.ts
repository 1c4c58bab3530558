// The SQLite migrations this binary carries, and the step that brings a database up to them.
import type { Database } from "bun:sqlite";
import { embeddedMigrations } from "../migrations.macro.ts" with { type: "macro" };
import { applyMigrations } from "./apply-migrations.ts";

const MIGRATIONS = embeddedMigrations("sqlite");
/** How many migrations this binary carries: a database that applied fewer is behind it. */
export const MIGRATION_COUNT = MIGRATIONS.length;

export function migrateSqlite(client: Database): void {
  applyMigrations(client, MIGRATIONS);
}
