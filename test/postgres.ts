// Throwaway PostgreSQL databases for tests: each run creates its own and drops it afterwards.
// When CI=true a missing PostgreSQL fails the run; elsewhere the PostgreSQL tests are skipped.
import { SQL } from "bun";

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  url: string;
  /** Empties every table, keeping the schema. */
  truncate(): Promise<void>;
  drop(): Promise<void>;
}

let reachable: Promise<boolean> | undefined;

/** Whether PostgreSQL answers; with CI=true an unreachable server is an error, not a skip. */
export function postgresAvailable(): Promise<boolean> {
  reachable ??= (async () => {
    const admin = new SQL({ url: ADMIN_URL, max: 1, connectionTimeout: 3 });
    try {
      await admin`select 1`;
      return true;
    } catch (error) {
      if (process.env.CI === "true") throw new Error(`PostgreSQL at ${ADMIN_URL} is required in CI: ${String(error)}`);
      console.warn(`PostgreSQL at ${ADMIN_URL} is unreachable; its tests are skipped.`);
      return false;
    } finally {
      await admin.close();
    }
  })();
  return reachable;
}

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `svc_test_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new SQL({ url: ADMIN_URL, max: 1 });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  await admin.close();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  // One connection for the emptying between tests, and DELETE rather than TRUNCATE: on tables this small
  // TRUNCATE's file work cost ten times the rows'.
  let cleaner: SQL | undefined;
  let emptying: string | undefined;
  return {
    url: url.toString(),
    async truncate() {
      cleaner ??= new SQL({ url: url.toString(), max: 1 });
      emptying ||= await emptyingStatements(cleaner);
      if (emptying) await cleaner.unsafe(emptying);
    },
    async drop() {
      await cleaner?.close();
      cleaner = undefined;
      const cleanup = new SQL({ url: ADMIN_URL, max: 1 });
      await cleanup.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await cleanup.close();
    },
  };
}

/**
 * DELETE statements for every table svc made, a referencing table before the one it references, so that a
 * new table is emptied too. table_versions is kept: it only ever grows, as a cache built before expects.
 */
async function emptyingStatements(db: SQL): Promise<string> {
  const tables = (
    await db<{ name: string }[]>`
      SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'table_versions'`
  ).map((row) => row.name);
  const references = await db<{ child: string; parent: string }[]>`
    SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
    FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid <> c.confrelid`;
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (table: string) => {
    if (seen.has(table)) return;
    seen.add(table);
    for (const { child, parent } of references) if (parent === table && child !== table) visit(child);
    ordered.push(table);
  };
  for (const table of tables) visit(table);
  return ordered
    .filter((table) => tables.includes(table))
    .map((table) => `DELETE FROM "${table}";`)
    .join(" ");
}

/** The Config's database section for a test database, with short timeouts. */
export function postgresConfig(url: string) {
  return {
    kind: "postgres" as const,
    url,
    poolMax: 5,
    connectTimeoutS: 2,
    statementTimeoutMs: 2000,
    stalenessMs: 1000,
  };
}
