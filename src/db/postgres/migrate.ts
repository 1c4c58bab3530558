// Applies the embedded PostgreSQL migrations under an advisory lock, so that instances starting
// together migrate once: the first takes the lock and migrates, the others wait and find nothing to do.
// Drizzle's bookkeeping and rule as its own migrator keeps them (drizzle.__drizzle_migrations; a
// migration runs when it is newer than the newest recorded), with svc's record of each beside it, in
// the same transaction; a database a later svc migrated is refused, untouched (../upgrades.ts).
import type { SQL } from "bun";
import { version } from "../../../package.json";
import { embeddedMigrations } from "../migrations.macro.ts" with { type: "macro" };
import type { BehindDatabase, LatestMigration, UpgradeStep } from "../upgrades.ts";
import { behind, pendingMigrations, RECORDED_MIGRATIONS, refuseNewer } from "../upgrades.ts";

export const MIGRATIONS = embeddedMigrations("postgres");
/** An arbitrary constant naming svc's migration lock ("svc" in ASCII). */
const MIGRATION_LOCK = 0x737663;

/**
 * Brings the database up to this binary's migrations, telling `onStep` of each one applied. Throws
 * NewerDatabase, having changed nothing, for a database a later svc migrated; `database` names it.
 */
export async function migratePostgres(
  client: SQL,
  database: string,
  onStep?: (step: UpgradeStep) => void,
): Promise<void> {
  const connection = await client.reserve();
  try {
    // Migrations may take longer than a request may: no statement timeout on this connection.
    await connection`SET statement_timeout = 0`;
    await connection`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      const latest = await latestMigration(connection);
      refuseNewer(database, latest, MIGRATIONS);
      const pending = pendingMigrations(MIGRATIONS, latest?.createdAt ?? null);
      if (pending.length > 0) await apply(connection, pending);
      for (const migration of pending) onStep?.({ applied: migration.name });
    } finally {
      await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
      await connection`RESET statement_timeout`;
    }
  } finally {
    connection.release();
  }
}

/** See upgrades.ts, behind. */
export async function behindPostgres(client: SQL, database: string): Promise<BehindDatabase | null> {
  return behind(database, await latestMigration(client), MIGRATIONS);
}

/** The newest migration the database records, with what svc recorded of it; null: none. */
async function latestMigration(client: SQL): Promise<LatestMigration | null> {
  const createdAt = await latestCreatedAt(client);
  return createdAt === null ? null : recorded(client, createdAt);
}

async function latestCreatedAt(client: SQL): Promise<number | null> {
  const [table] = await client`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS drizzle`;
  if (!table.drizzle) return null;
  const [last] = await client`SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`;
  return last ? Number(last.created_at) : null;
}

/** What svc recorded of the migration of `createdAt`: nothing, for one an svc that kept no record applied. */
async function recorded(client: SQL, createdAt: number): Promise<LatestMigration> {
  const latest: LatestMigration = { createdAt, name: null, svcVersion: null };
  const [table] = await client`SELECT to_regclass(${`drizzle.${RECORDED_MIGRATIONS}`}) IS NOT NULL AS svc`;
  if (!table.svc) return latest;
  const [row] = await client.unsafe(
    `SELECT name, svc_version FROM drizzle.${RECORDED_MIGRATIONS} WHERE created_at = $1`,
    [createdAt],
  );
  return { createdAt, name: row?.name ?? null, svcVersion: row?.svc_version ?? null };
}

async function apply(connection: SQL, pending: typeof MIGRATIONS): Promise<void> {
  await connection.begin(async (tx) => {
    await tx`CREATE SCHEMA IF NOT EXISTS drizzle`;
    await tx`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`;
    await tx.unsafe(
      `CREATE TABLE IF NOT EXISTS drizzle.${RECORDED_MIGRATIONS} (created_at bigint PRIMARY KEY, name text NOT NULL, svc_version text NOT NULL)`,
    );
    for (const migration of pending) {
      for (const statement of migration.sql) await tx.unsafe(statement);
      await tx`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`;
      await tx.unsafe(
        `INSERT INTO drizzle.${RECORDED_MIGRATIONS} (created_at, name, svc_version) VALUES ($1, $2, $3)
         ON CONFLICT (created_at) DO UPDATE SET name = excluded.name, svc_version = excluded.svc_version`,
        [migration.folderMillis, migration.name, version],
      );
    }
  });
}
