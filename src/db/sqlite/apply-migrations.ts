// Applies SQLite migrations, keeping Drizzle's own bookkeeping (the same table, rows and rule: a
// migration runs when it is newer than the newest one recorded), so databases migrated by earlier
// versions, through Drizzle's migrator, go on as before; svc records beside each its name and version
// (../upgrades.ts). Written against bun:sqlite itself: svc migrates before it listens, and Drizzle's
// code is then not yet needed (docs/performance.md, "Footprint"). Apart from migrate.ts, which carries
// the migrations, so that the bundle-time macro making the empty database (empty-database.macro.ts) can
// run the same code.
import type { Database } from "bun:sqlite";
import type { EmbeddedMigration } from "../migrations.macro.ts";
import { pendingMigrations, RECORDED_MIGRATIONS } from "../upgrades.ts";

/** Drizzle's created_at of the newest migration the database records; null for none (or no table). */
export function latestCreatedAt(client: Database): number | null {
  const table = client
    .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
    .get();
  if (!table) return null;
  const last = client
    .query<{ created_at: number | string }, []>(
      'SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1',
    )
    .get();
  return last ? Number(last.created_at) : null;
}

/**
 * Applies those of `migrations` the database lacks, in one IMMEDIATE transaction that reads what it
 * lacks first (another process migrating the same file meanwhile leaves nothing to do), recording each
 * as applied by svc `svcVersion`. Returns the ones it applied.
 */
export function applyMigrations(
  client: Database,
  migrations: readonly EmbeddedMigration[],
  svcVersion: string,
): EmbeddedMigration[] {
  return client
    .transaction(() => {
      const pending = pendingMigrations(migrations, latestCreatedAt(client));
      if (pending.length === 0) return pending;
      client.run(
        'CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
      );
      client.run(
        `CREATE TABLE IF NOT EXISTS "${RECORDED_MIGRATIONS}" (created_at numeric PRIMARY KEY, name text NOT NULL, svc_version text NOT NULL)`,
      );
      const record = client.prepare<unknown, [string, number]>(
        'INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)',
      );
      const recordSvc = client.prepare<unknown, [number, string, string]>(
        `INSERT OR REPLACE INTO "${RECORDED_MIGRATIONS}" (created_at, name, svc_version) VALUES (?, ?, ?)`,
      );
      for (const migration of pending) {
        for (const statement of migration.sql) client.run(statement);
        record.run(migration.hash, migration.folderMillis);
        recordSvc.run(migration.folderMillis, migration.name, svcVersion);
      }
      record.finalize();
      recordSvc.finalize();
      return pending;
    })
    .immediate();
}
