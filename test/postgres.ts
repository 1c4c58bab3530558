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
  return {
    url: url.toString(),
    async truncate() {
      const db = new SQL({ url: url.toString(), max: 1 });
      await db.unsafe(
        "TRUNCATE refresh_tokens, sessions, password_resets, audit_events, categories, users, login_throttle, revoked_tokens, idempotency_keys",
      );
      await db.close();
    },
    async drop() {
      const cleanup = new SQL({ url: ADMIN_URL, max: 1 });
      await cleanup.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await cleanup.close();
    },
  };
}

/** The Config's database section for a test database, with short timeouts. */
export function postgresConfig(url: string) {
  return { kind: "postgres" as const, url, poolMax: 5, connectTimeoutS: 2, statementTimeoutMs: 2000 };
}
