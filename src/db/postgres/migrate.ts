// Applies the embedded PostgreSQL migrations under an advisory lock, so that instances starting
// together migrate once: the first takes the lock and migrates, the others wait and find nothing to do.
import type { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { MigrationConfig, MigrationMeta } from "drizzle-orm/migrator";
import { embeddedMigrations } from "../migrations.macro.ts" with { type: "macro" };

const MIGRATIONS: MigrationMeta[] = embeddedMigrations("postgres");
/** How many migrations this binary carries: a database that applied fewer is behind it. */
export const MIGRATION_COUNT = MIGRATIONS.length;
/** An arbitrary constant naming svc's migration lock ("svc" in ASCII). */
const MIGRATION_LOCK = 0x737663;

interface DrizzleInternals {
  dialect: { migrate(migrations: MigrationMeta[], session: unknown, config: MigrationConfig): Promise<void> };
  session: unknown;
}

export async function migratePostgres(client: SQL): Promise<void> {
  const connection = await client.reserve();
  try {
    // Migrations may take longer than a request may: no statement timeout on this connection.
    await connection`SET statement_timeout = 0`;
    await connection`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      const db = drizzle({ client: connection as unknown as SQL });
      const { dialect, session } = db as unknown as DrizzleInternals;
      await dialect.migrate(MIGRATIONS, session, { migrationsFolder: "(embedded)" });
    } finally {
      await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
      await connection`RESET statement_timeout`;
    }
  } finally {
    connection.release();
  }
}
