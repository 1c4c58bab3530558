// What differs between the databases svc supports, and nothing more. The aggregates' Drizzle code
// (users.ts, categories.ts, ...), joined in drizzle-store.ts, is written against this; sqlite/store.ts
// and postgres/store.ts each make one.
import type { PgColumn, PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { ErrorCode } from "../errors/index.ts";
import type * as pgTables from "./postgres/schema.ts";
import type { DialectFeed } from "./feeds.ts";
import type { StorageState } from "./storage.ts";
import type { Awaitable } from "../lib/awaitable.ts";
import type { Rotation, TableVersions, TokenState } from "./records.ts";

/**
 * The Drizzle database, in PostgreSQL's types. Drizzle types each dialect apart and offers no type for
 * what they share, though the builders the store uses (select, insert, update and delete with
 * returning, onConflictDoNothing, sql) are alike in both. So the store is written once in these types,
 * and the SQLite dialect hands its own database in under them (one cast, in sqlite/store.ts, beside
 * a compile-time check that both schemas read and write the same rows); the storage conformance
 * suite runs the one store on every database to hold that promise. Nothing dialect-specific may be
 * called on it outside the dialect that owns it (PostgreSQL's `execute`: see silenceFeed).
 */
export type Db = PgDatabase<PgQueryResultHKT>;

/** The tables, in PostgreSQL's types (see Db). Both schemas name the same columns with the same values. */
export type Tables = typeof pgTables;

/** A column of Tables, in PostgreSQL's types (see Db). */
export type DbColumn = PgColumn;

/** Turns the detail of a unique violation (a constraint name or a message) into the contract's code. */
export type Clash = (detail: string) => ErrorCode;

export interface Dialect {
  kind: "sqlite" | "postgres";
  db: Db;
  tables: Tables;
  /**
   * Runs one store operation, turning the driver's errors into the contract's: a unique violation into
   * `clash`'s code, a full disk into `storage_full`, a database that does not answer into
   * `database_unavailable` (within a deadline, where the database is across a network).
   */
  run<T>(work: () => Promise<T>, clash?: Clash): Promise<T>;
  /**
   * Runs one store operation that writes (insert, update or delete), as run does. Every operation that
   * writes outside a transaction says so here: on PostgreSQL, kept reads then wait to hear of the write
   * before memory answers again (postgres/kept-reads.ts). A transaction is always taken for a write.
   */
  write<T>(work: () => Promise<T>, clash?: Clash): Promise<T>;
  /**
   * Runs `work` in one transaction; errors as run's. Its deadline is run's when `timed`, else none (a
   * bulk load is as long as its data). A write referring to a row that is gone (a foreign key) throws
   * ReferenceGone.
   */
  transaction<T>(work: (tx: Db) => Promise<T>, options?: { timed?: boolean; clash?: Clash }): Promise<T>;
  /**
   * Within a transaction, waits until no other transaction holding `name` (on any instance) is open,
   * and holds it until this one ends: for checks a row lock cannot cover, such as "some admin remains".
   */
  serialize(tx: Db, name: string): Promise<void>;
  /**
   * Within a bulk load's transaction, before it writes: none of its changes reach the change feed, for
   * a load is not a stream of changes. (PostgreSQL's trigger is told so; SQLite's feed hears only what
   * the store hands it, and a load hands it nothing.)
   */
  silenceFeed(tx: Db): Promise<void>;
  /**
   * The reads every authenticated request makes: SQLite's as plain statements (cheaper than Drizzle's
   * in process), PostgreSQL's kept in memory while provably recent (postgres/kept-reads.ts).
   */
  hotReads: HotReads;
  /** What only PostgreSQL has; absent on SQLite. */
  postgres?: PostgresExtras;
  /** Resolves when the database answers a trivial query within timeoutMs; rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  storage(): StorageState;
  pool(): PoolState;
  /** Committed category changes: announced by the writing transaction, heard by listeners. */
  feed: DialectFeed;
  close(): Promise<void>;
}

/** PostgreSQL's fast paths, which SQLite, in process, has no need of. */
export interface PostgresExtras {
  /**
   * SessionStore.rotate in one statement, where the store's transaction of three costs round trips
   * (bench/results.md). Locks the session before its token, as every other write does.
   */
  rotate(digest: string, rotation: Rotation): Promise<boolean>;
  /** See Store.tokenChecks. */
  tokenChecks(): TokenChecks;
  /** See VersionedStore.settled. */
  settled(): Promise<void>;
}

/** A dialect's own statements for the reads of every request; tokenState gets an id already parsed. */
export interface HotReads {
  /** See VersionedStore.tokenState. */
  tokenState(userId: string, jti: string, sessionId?: string): Awaitable<TokenState | null>;
  /** See VersionedStore.versions. */
  versions(): Awaitable<TableVersions>;
}

/** The database's connections: how many may be pooled, how many are open, and how many of those are busy. */
export interface TokenChecks {
  memory: number;
  database: number;
}

export interface PoolState {
  max: number;
  /** Open now (on PostgreSQL, with the LISTEN connection beside the pool once someone subscribes). */
  open: number;
  /** Serving an operation now; never more than `open`. */
  busy: number;
}
