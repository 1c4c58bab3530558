// Second factors written straight into a test database, as the factor code (src/auth/mfa/, passkeys/) stores
// them: the admin tests need an administrator with a factor before any enrolment route is at hand, and a
// look at what a reset left. A store on a database of the test's own (a file, or a PostgreSQL database
// under TEST_DATABASE=postgres), and a second connection to it for the rows.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { openPostgresStore } from "../../src/db/postgres/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { createTestDatabase, postgresConfig } from "../postgres.ts";

const TABLES = ["mfa_totp", "mfa_recovery_codes", "passkeys", "mfa_challenges", "webauthn_challenges"] as const;
export type FactorTable = (typeof TABLES)[number];

export interface FactorRows {
  totp(userId: string, confirmed: boolean): Promise<void>;
  passkey(userId: string): Promise<void>;
  /** Recovery codes, a login's second step and a WebAuthn challenge: what a reset clears besides the factors. */
  extras(userId: string): Promise<void>;
  /** The user's rows in each table. */
  count(userId: string): Promise<Record<FactorTable, number>>;
}

export interface FactorDatabase {
  store: VersionedStore;
  rows: FactorRows;
  close(): Promise<void>;
}

type Exec = (text: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

const now = () => new Date().toISOString();
const later = () => new Date(Date.now() + 300_000).toISOString();

function factorRows(exec: Exec, mark: (n: number) => string): FactorRows {
  const insert = (table: string, row: Record<string, unknown>) => {
    const names = Object.keys(row);
    return exec(
      `INSERT INTO ${table} (${names.join(", ")}) VALUES (${names.map((_, i) => mark(i + 1)).join(", ")})`,
      Object.values(row),
    ).then(() => undefined);
  };
  const id = () => crypto.randomUUID();
  return {
    totp: (userId, confirmed) =>
      insert("mfa_totp", {
        user_id: userId,
        secret_sealed: "sealed-secret",
        created_at: now(),
        confirmed_at: confirmed ? now() : null,
      }),
    passkey: (userId) =>
      insert("passkeys", {
        id: id(),
        user_id: userId,
        credential_id: id(),
        public_key: "cose-public-key",
        device_type: "singleDevice",
        name: "Laptop",
        created_at: now(),
      }),
    async extras(userId) {
      for (let i = 0; i < 3; i++)
        await insert("mfa_recovery_codes", { digest: id(), user_id: userId, created_at: now() });
      await insert("mfa_challenges", {
        digest: id(),
        user_id: userId,
        mode: "json",
        first_factor: "pwd",
        created_at: now(),
        expires_at: later(),
      });
      await insert("webauthn_challenges", {
        id: id(),
        user_id: userId,
        purpose: "register",
        challenge: "challenge",
        created_at: now(),
        expires_at: later(),
      });
    },
    async count(userId) {
      const counts = {} as Record<FactorTable, number>;
      for (const table of TABLES) {
        const [row] = await exec(`SELECT count(*) AS n FROM ${table} WHERE user_id = ${mark(1)}`, [userId]);
        counts[table] = Number(row!.n);
      }
      return counts;
    },
  };
}

/** A fresh database of the kind the API tests run on (TEST_DATABASE), its store, and its factor rows. */
export async function factorDatabase(): Promise<FactorDatabase> {
  if (process.env.TEST_DATABASE === "postgres") {
    const database = await createTestDatabase("factors");
    const store = await openPostgresStore(postgresConfig(database.url));
    const client = new SQL({ url: database.url, max: 1 });
    return {
      store,
      rows: factorRows(
        (text, params) => client.unsafe(text, params),
        (n) => `$${n}`,
      ),
      async close() {
        await client.close();
        await store.close();
        await database.drop();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "svc-factors-"));
  const path = join(dir, "svc.db");
  const store = openSqliteStore(path);
  const client = new Database(path);
  client.run("PRAGMA busy_timeout = 5000");
  return {
    store,
    rows: factorRows(
      async (text, params) =>
        client.query(text).all(...(params as Array<string | null>)) as Array<Record<string, unknown>>,
      () => "?",
    ),
    async close() {
      client.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
