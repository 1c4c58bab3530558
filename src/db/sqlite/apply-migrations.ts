// Applies SQLite migrations, keeping Drizzle's own bookkeeping (the same table, rows and rule: a
// migration runs when it is newer than the newest one recorded), so databases migrated by earlier
// versions, through Drizzle's migrator, go on as before. Written against bun:sqlite itself: svc
// migrates before it listens, and Drizzle's code is then not yet needed (docs/performance.md, "Footprint").
// Apart from migrate.ts, which carries the migrations, so that the bundle-time macro making the
// empty database (empty-database.macro.ts) can run the same code.
import type { Database } from "bun:sqlite";
import type { EmbeddedMigration } from "../migrations.macro.ts";

export function applyMigrations(client: Database, migrations: readonly EmbeddedMigration[]): void {
  client.run(
    'CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
  );
  const last = client
    .query<{ created_at: number | string }, []>(
      'SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1',
    )
    .get();
  const pending = migrations.filter((m) => !last || Number(last.created_at) < m.folderMillis);
  if (pending.length === 0) return;
  const record = client.prepare<unknown, [string, number]>(
    'INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)',
  );
  client.transaction(() => {
    for (const migration of pending) {
      for (const statement of migration.sql) client.run(statement);
      record.run(migration.hash, migration.folderMillis);
    }
  })();
  record.finalize();
}
