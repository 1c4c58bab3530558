// SQLite's side of the one store (../drizzle-store.ts): one bun:sqlite connection to a file (WAL, full
// sync, foreign keys; opened, checked and migrated by connection.ts), and SQLite's errors read into
// the contract's.
import type { Database } from "bun:sqlite";
import type { InferInsertModel, InferSelectModel, Table } from "drizzle-orm";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { AppError } from "../../errors/index.ts";
import type { Clash, Db, Dialect, HotReads, Tables } from "../dialect.ts";
import { drizzleStore } from "../drizzle-store.ts";
import { localFeed } from "../feeds.ts";
import type { StorageMonitor } from "../storage.ts";
import { ReferenceGone, type OpenOptions, type VersionedStore } from "../store.ts";
import type { TableVersions, TokenState } from "../tokens.ts";
import { setBounded } from "../../lib/bounded-map.ts";
import { type Commits, watchCommits } from "./commits.ts";
import { groupCommit } from "./group-commit.ts";
import { openSqliteConnection, type SqliteConnection } from "./connection.ts";
import type * as pgTables from "../postgres/schema.ts";
import * as tables from "./schema.ts";
import { keptStatements, type KeptStatements } from "./statements.ts";

/** Opens (creating if needed, unless `existing`) and migrates the database at `path`, or an in-memory one for ":memory:". */
export function openSqliteStore(path: string, options: OpenOptions = {}): VersionedStore {
  return sqliteStore(openSqliteConnection(path, options));
}

/** The store over a connection opened by openSqliteConnection; closing the store closes it. */
export function sqliteStore(connection: SqliteConnection): VersionedStore {
  const { client, walIndex } = connection;
  const statements = keptStatements(client);
  // Drizzle's driver types its client as a whole Database; it calls only what DrizzleClient picks.
  const typed = inStoreTypes(drizzle({ client: statements.client as Database }));
  return drizzleStore(sqliteDialect(connection, typed, statements, watchCommits(walIndex)));
}

/**
 * SQLite's database and tables in the PostgreSQL types the one store is written in (dialect.ts, Db).
 * Drizzle has no type for the builders both dialects share, so a cast stands here where an honest
 * type cannot. The tables are declared once (../schema/), each database's kit holding every column kind to
 * the value it declares (schema/kit.ts, `seen`), and SameRows below checks the rows come out the same, so the
 * cast hides no difference in what is read or written.
 */
function inStoreTypes(db: BunSQLiteDatabase): Pick<Dialect, "db" | "tables"> {
  return { db: db as unknown as Db, tables: tables as unknown as Tables };
}

/** Every table, as the rows it reads and writes. */
type Rows<Schema> = {
  [Name in keyof Schema]: Schema[Name] extends Table
    ? { select: InferSelectModel<Schema[Name]>; insert: InferInsertModel<Schema[Name]> }
    : never;
};
type Same<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;
type Holds<Check extends true> = Check;
/** Compiles only while both schemas' tables have the same rows: columns, types, nullability, defaults. */
export type SameRows = Holds<Same<Rows<typeof tables>, Rows<typeof pgTables>>>;

function sqliteDialect(
  connection: SqliteConnection,
  { db, tables }: Pick<Dialect, "db" | "tables">,
  statements: KeptStatements,
  commits: Commits | null,
): Dialect {
  const { client, storage } = connection;
  const gate = new ConnectionGate();
  const group = groupCommit(client, (work) => gate.exclusive(work));
  const run: Dialect["run"] = async (work, clash) => {
    // Awaited only when it must wait: this runs for every statement.
    const waiting = gate.enter();
    if (waiting) await waiting;
    try {
      return await work();
    } catch (error) {
      throw sqliteError(error, storage, clash);
    } finally {
      gate.leave();
    }
  };
  return {
    kind: "sqlite",
    db,
    tables,
    run,
    // In process, nothing is kept that a write must wait to hear of; it commits in a group as a transaction does
    // (group-commit.ts): on its own, each statement was a COMMIT of its own, and a wait for the disk.
    write: (work, clash) => group.transaction(work, (error) => sqliteError(error, storage, clash)),
    // In process, a transaction cannot be kept waiting by a database that went away: `timed` says only that it
    // is a few statements, which commit in a group with those asked for beside them (group-commit.ts).
    transaction: (work, options) =>
      options?.timed
        ? group.transaction(
            () => work(db),
            (error) => sqliteError(error, storage, options.clash),
          )
        : gate.exclusive(async () => {
            // IMMEDIATE takes the write lock at once: another process's writes wait (busy_timeout).
            client.run("BEGIN IMMEDIATE");
            try {
              const result = await work(db);
              client.run("COMMIT");
              return result;
            } catch (error) {
              // SQLite rolls back by itself after some failures (SQLITE_FULL among them).
              if (client.inTransaction) client.run("ROLLBACK");
              throw sqliteError(error, storage, options?.clash);
            }
          }),
    // Every write transaction is IMMEDIATE: it already runs alone.
    serialize: async () => {},
    // The feed hears only the changes the store hands it once committed (feeds.ts), and a load hands none.
    silenceFeed: async () => {},
    hotReads: hotReads(client, run, commits),
    ping: connection.ping,
    storage: connection.storageState,
    // One connection, open while the store is, and every statement finishes before the next starts.
    pool: () => ({ max: 1, open: 1, busy: 0 }),
    feed: localFeed(),
    async close() {
      // What was asked for before the close lands (or fails) before the connection goes.
      await group.close();
      commits?.close();
      // Statements Drizzle prepared live until they are collected, and SQLite's connection with them, so
      // close() alone left the WAL to be folded into the file at some later collection: after the caller
      // had moved on (copied the file, opened it elsewhere). Folded now, the file is whole at close.
      try {
        if (commits) client.run("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        statements.finalize();
        connection.close();
      }
    },
  };
}

/** Token states kept between commits: one per token in use, up to this many. */
const KEPT_TOKEN_STATES = 10_000;

/**
 * The two reads of every authenticated request, as plain statements: through Drizzle's prepared
 * queries (placeholders filled, rows mapped) they cost more on an in-process database (bun run
 * bench:micro; bench/results.md, "Figures behind the code"). PostgreSQL, a round trip away, keeps the one store's.
 *
 * On a database file, their answers are also kept until the next commit by anyone (commits.ts): a
 * token used again meanwhile is answered from memory, since nothing it depends on can have changed.
 * A logout, a password change or a disabling is a commit, so the very next request reads again and
 * is refused; a revoked token is never accepted, whichever process revoked it. A session's expiry is
 * kept as a time, not as a verdict: the authenticator compares it with the clock on every request.
 */
function hotReads(client: Database, run: Dialect["run"], commits: Commits | null): HotReads {
  const VERSIONS = `(SELECT version FROM table_versions WHERE name = 'users') AS users, (SELECT version FROM table_versions WHERE name = 'categories') AS categories`;
  const versions = client.query<TableVersions, []>(`SELECT ${VERSIONS}`);
  // A token with a session is revoked by the session's end, and serves until its expires_at; one from
  // before sessions is revoked by its jti.
  const byJti = client.query<{ revoked: number } & TableVersions, [string, string]>(
    `SELECT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ?) AS revoked, ${VERSIONS} FROM users WHERE id = ?`,
  );
  const bySession = client.query<{ expiresAt: string | null } & TableVersions, [string, string]>(
    `SELECT (SELECT expires_at FROM sessions WHERE id = ? AND user_id = users.id) AS expiresAt, ${VERSIONS} FROM users WHERE id = ?`,
  );
  const versionsOf = (row: TableVersions): TableVersions => ({ users: row.users, categories: row.categories });
  /** The token's state as the database has it now. */
  const read = (userId: string, jti: string, sessionId: string | undefined): TokenState | null => {
    if (sessionId === undefined) {
      const row = byJti.get(jti, userId);
      return row && { revoked: row.revoked === 1, expiresAt: null, versions: versionsOf(row) };
    }
    const row = bySession.get(sessionId, userId);
    return row && { revoked: row.expiresAt === null, expiresAt: row.expiresAt, versions: versionsOf(row) };
  };
  // By jti (the token's own id, one string object per verified token, so its hash is already known),
  // checked against the user and session asked for: a key joined from all three was a fresh string
  // to build and hash on every request.
  const states = new Map<string, { userId: string; sessionId: string | undefined; state: TokenState | null }>();
  let tables: TableVersions | undefined;
  /** Whether what is kept still holds; if not, it goes, and the mark for what is read next is taken. */
  const keptHolds = (): boolean => {
    if (!commits) return false;
    if (commits.unchangedSinceMark()) return true;
    states.clear();
    tables = undefined;
    // Before the reads whose answers are kept: a commit after it (even before they run) ends them.
    commits.mark();
    return false;
  };
  return {
    versions() {
      if (keptHolds() && tables) return tables;
      return run(async () => {
        const read = versions.get()!;
        if (commits) tables = read;
        return read;
      });
    },
    tokenState(userId, jti, sessionId) {
      if (keptHolds()) {
        const kept = states.get(jti);
        if (kept !== undefined && kept.userId === userId && kept.sessionId === sessionId) return kept.state;
      }
      return run(async () => {
        const state = read(userId, jti, sessionId);
        if (commits) setBounded(states, jti, { userId, sessionId, state }, KEPT_TOKEN_STATES);
        return state;
      });
    },
  };
}

/** SQLite's error as the contract's: a unique violation as `clash` says, a full disk as storage_full. */
function sqliteError(error: unknown, storage: StorageMonitor, clash: Clash | undefined): unknown {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (clash && code === "SQLITE_CONSTRAINT_UNIQUE") return new AppError(clash(e.message));
    if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") return new ReferenceGone(e.message, { cause: error });
    if (code === "SQLITE_FULL") return storage.full(error);
  }
  return error;
}

/**
 * One connection serves every operation, so a transaction open across an await would take in the
 * statements of operations running meanwhile, and its rollback would undo them. So operations wait
 * while a transaction runs, and a transaction starts once the running operations are done. (An
 * operation's work must not itself wait for another operation.)
 */
class ConnectionGate {
  private running = 0;
  private idle: (() => void) | null = null;
  /** Set while a transaction waits or runs. */
  closed: Promise<void> | null = null;

  /**
   * Counts an operation in once no transaction waits or runs. The check and the count are one
   * synchronous step, so no transaction can start in between.
   */
  enter(): Promise<void> | undefined {
    if (this.closed) return this.enterOnceOpen();
    this.running++;
  }

  private async enterOnceOpen(): Promise<void> {
    while (this.closed) await this.closed;
    this.running++;
  }

  leave(): void {
    if (--this.running === 0) this.idle?.();
  }

  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    // As in enter: from the last check to closing the gate, nothing else runs.
    while (this.closed) await this.closed;
    let release!: () => void;
    this.closed = new Promise((resolve) => {
      release = resolve;
    });
    try {
      if (this.running > 0) {
        await new Promise<void>((resolve) => {
          this.idle = resolve;
        });
      }
      return await work();
    } finally {
      this.idle = null;
      this.closed = null;
      release();
    }
  }
}
