// Applies the embedded SQLite migrations with Drizzle's own bookkeeping table.
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { MigrationConfig, MigrationMeta } from "drizzle-orm/migrator";
import { embeddedMigrations } from "../migrations.macro.ts" with { type: "macro" };

const MIGRATIONS: MigrationMeta[] = embeddedMigrations("sqlite");
/** How many migrations this binary carries: a database that applied fewer is behind it. */
export const MIGRATION_COUNT = MIGRATIONS.length;

// Drizzle's migrate() insists on reading files from disk; its dialect step takes them as data.
// Both members exist at run time but are marked internal in Drizzle's types.
interface DrizzleInternals {
  dialect: { migrate(migrations: MigrationMeta[], session: unknown, config: MigrationConfig): void };
  session: unknown;
}

export function migrateSqlite(db: BunSQLiteDatabase): void {
  const { dialect, session } = db as unknown as DrizzleInternals;
  dialect.migrate(MIGRATIONS, session, { migrationsFolder: "(embedded)" });
}
