// PostgreSQL's side of the one store (../drizzle-store.ts): a pool of Bun's SQL client, migrated under an
// advisory lock on open, and a deadline on every call: a unique violation becomes the contract's code,
// a database that does not answer becomes `database_unavailable` (503) within seconds.
import { SQL } from "bun";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import type { PostgresConfig } from "../../config/index.ts";
import { describeDatabase } from "../describe.ts";
import { AppError } from "../../errors/index.ts";
import type { Clash, Db, Dialect } from "../dialect.ts";
import { drizzleStore } from "../drizzle-store.ts";
import { hotReads } from "../tokens.ts";
import { notifyFeed } from "../feeds.ts";
import { storageMonitor, type StorageMonitor } from "../storage.ts";
import { NoSuchDatabase, ReferenceGone, type OpenOptions, type VersionedStore } from "../store.ts";
import { type ConnectionCount, connectionCount } from "./connections.ts";
import { keptReads } from "./kept-reads.ts";
import { behindPostgres, migratePostgres } from "./migrate.ts";
import * as tables from "./schema.ts";

/**
 * Connects, migrates under an advisory lock (never one a later svc migrated) or with `existing`
 * refuses a database svc did not make or that is behind this binary, and returns the store.
 */
export async function openPostgresStore(
  config: PostgresConfig,
  { existing = false, onUpgrade }: OpenOptions = {},
): Promise<VersionedStore> {
  const connections = connectionCount();
  const client = new SQL({
    url: config.url,
    max: config.poolMax,
    connectionTimeout: config.connectTimeoutS,
    idleTimeout: 60,
    connection: { statement_timeout: config.statementTimeoutMs, application_name: "svc" },
    onconnect: connections.onconnect,
    onclose: connections.onclose,
  });
  try {
    if (existing) {
      const [found] = (await client.unsafe(
        "SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS svc",
        [],
      )) as Array<{ svc: boolean }>;
      if (!found?.svc)
        throw new NoSuchDatabase(`${describeDatabase(config)} is not an svc database (it has no svc tables)`);
    }
    // Only serve and migrate migrate (`existing` is every other command): an older svc may be serving it.
    if (existing) {
      const behind = await behindPostgres(client, describeDatabase(config));
      if (behind) throw behind;
    } else await migratePostgres(client, describeDatabase(config), onUpgrade);
  } catch (error) {
    await client.close();
    throw error;
  }
  return drizzleStore(postgresDialect(client, config, connections));
}

function postgresDialect(client: SQL, config: PostgresConfig, connections: ConnectionCount): Dialect {
  const db: Db = drizzle({ client });
  // The server cancels a statement at statement_timeout; this deadline also covers a server that
  // does not answer at all, and a pool waiting for a connection that will not come.
  const deadlineMs = config.statementTimeoutMs + config.connectTimeoutS * 1000;
  const storage = storageMonitor();
  let busy = 0;
  const guard = async <T>(work: () => Promise<T>, clash: Clash | undefined, deadline: number) => {
    busy++;
    try {
      return await guarded(work, deadline, storage, clash);
    } finally {
      busy--;
    }
  };
  const read = <T>(work: () => Promise<T>, clash?: Clash) => guard(work, clash, deadlineMs);
  const kept = keptReads(client, hotReads({ db, tables, run: read }), { stalenessMs: config.stalenessMs });
  /** A store operation that writes: once it has ended (committed or not), kept reads wait to hear of it. */
  async function write<T>(work: () => Promise<T>, clash?: Clash): Promise<T> {
    try {
      return await read(work, clash);
    } finally {
      kept.wrote();
    }
  }
  return {
    kind: "postgres",
    db,
    tables,
    run: read,
    write,
    async transaction(work, options) {
      try {
        return await guard(
          () => db.transaction((tx) => work(tx)),
          options?.clash,
          options?.timed ? deadlineMs : Infinity,
        );
      } finally {
        kept.wrote();
      }
    },
    // A transaction-scoped advisory lock: released by the commit or rollback, never left behind.
    serialize: async (tx, name) => void (await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${name}))`)),
    // Read by the category_events trigger: it announces nothing for this transaction.
    silenceFeed: async (tx) => void (await tx.execute(sql`select set_config('svc.bulk', 'on', true)`)),
    postgres: {
      rotate: (digest, { at, successor, sealed }) =>
        write(async () => {
          const rows = (await client.unsafe(ROTATE, [
            digest,
            at,
            sealed,
            successor.digest,
            successor.expiresAt,
          ])) as unknown[];
          return rows.length === 1;
        }),
      settled: () => kept.settled(),
      tokenChecks: () => kept.checks(),
    },
    hotReads: kept,
    ping: (timeoutMs) =>
      guard(async () => void (await db.execute(sql`select 1`)), undefined, Math.min(timeoutMs, deadlineMs)),
    storage: () => storage.state(),
    // Busy: operations in flight, each holding (or waiting for) a connection.
    pool: () => {
      const open = connections.open();
      return { max: config.poolMax, open, busy: Math.min(busy, open) };
    },
    feed: notifyFeed(client),
    async close() {
      await kept.close();
      await client.close({ timeout: 5 });
    },
  };
}

/**
 * SessionStore.rotate's transaction, as one statement: one round trip instead of five (bench/results.md).
 * The session's row is locked first, as every other write takes it, so a rotation racing a logout or a
 * deletion waits for it; of rotations racing each other, the later finds its token rotated and writes
 * nothing. Its text is fixed and sent through Bun's client with its parameters: built by Drizzle's `sql` on
 * every rotation it cost more of svc's CPU than the round trip (#59).
 * $1 digest, $2 at, $3 sealed answer, $4 successor's digest, $5 successor's expiry.
 */
const ROTATE = `with locked as (
  select id from sessions where id = (select session_id from refresh_tokens where digest = $1)
  for update
), rotated as (
  update refresh_tokens set rotated_at = $2::timestamptz, successor = $3
  where digest = $1 and rotated_at is null and session_id in (select id from locked)
  returning session_id
), moved as (
  update sessions set last_used_at = $2::timestamptz, expires_at = $5::timestamptz
  where id in (select session_id from rotated)
  returning id
)
insert into refresh_tokens (digest, session_id, expires_at)
select $4::text, id, $5::timestamptz from moved
returning session_id`;

/** SQLSTATE foreign_key_violation: a write named a row that is not there (any more). */
const FOREIGN_KEY_VIOLATION = "23503";

/** SQLSTATE disk_full: the server could not extend a file. */
const DISK_FULL = "53100";

/** SQLSTATE classes and client codes that mean "the database is not there", not "your request is wrong". */
function unavailable(error: { code?: unknown; errno?: unknown }): boolean {
  const code = String(error.code ?? "");
  const state = String(error.errno ?? "");
  return (
    (code.startsWith("ERR_POSTGRES_") && code !== "ERR_POSTGRES_SERVER_ERROR") ||
    state.startsWith("08") || // connection exception
    state.startsWith("57") || // operator intervention: query_canceled (statement timeout), admin_shutdown, cannot_connect_now
    state === "53300" // too_many_connections
  );
}

async function guarded<T>(
  work: () => Promise<T>,
  deadlineMs: number,
  storage: StorageMonitor,
  clash: Clash | undefined,
): Promise<T> {
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    if (deadlineMs === Infinity) return;
    timer = setTimeout(
      () => reject(new AppError("database_unavailable", "The database did not answer in time.")),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([work(), deadline]);
  } catch (error) {
    if (error instanceof AppError) throw error;
    for (let e: unknown = error; e instanceof Error; e = e.cause) {
      const pg = e as Error & { errno?: unknown; code?: unknown; constraint?: unknown };
      if (clash && pg.errno === "23505") throw new AppError(clash(String(pg.constraint ?? "")));
      if (pg.errno === FOREIGN_KEY_VIOLATION) throw new ReferenceGone(pg.message, { cause: error });
      if (pg.errno === DISK_FULL) throw storage.full(error);
      if (unavailable(pg))
        throw new AppError("database_unavailable", "The database is not answering.", { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
