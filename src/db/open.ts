// Opens the store SVC_DATABASE_URL names, migrated and ready. Each database's code is imported when it
// is the one in use: svc on SQLite never loads the PostgreSQL driver's code, nor the other way round.
import type { DatabaseConfig } from "../config/index.ts";
import { describeError } from "../errors/safe-errors.ts";
import { describeDatabase } from "./describe.ts";
import { NoSuchDatabase, type OpenOptions, type Store, type VersionedStore } from "./store.ts";
import { BehindDatabase, NewerDatabase } from "./upgrades.ts";

export { describeDatabase } from "./describe.ts";
export { setAsideNotice } from "./store.ts";
export { upgradeLogLine } from "./upgrades.ts";

/** A PostgreSQL database a command could not reach, said with where it was tried. */
export class CannotOpen extends Error {
  override name = "CannotOpen";
}

/**
 * What a command says when opening `database` failed: a PostgreSQL connection's failure with the database,
 * role, host and port it was tried at (never the password), as serve's start-up line does. svc's own
 * refusals, and SQLite's failures, already name the file.
 */
export function openFailure(database: DatabaseConfig, error: unknown): unknown {
  const named = error instanceof NoSuchDatabase || error instanceof NewerDatabase || error instanceof BehindDatabase;
  if (database.kind !== "postgres" || named) return error;
  return new CannotOpen(`cannot open the database ${describeDatabase(database)}: ${describeError(error)}`);
}

export async function openStore(database: DatabaseConfig, options: OpenOptions = {}): Promise<VersionedStore> {
  if (database.kind === "sqlite") return (await import("./sqlite/store.ts")).openSqliteStore(database.path, options);
  return (await import("./postgres/store.ts")).openPostgresStore(database, options);
}

/** A database opened and migrated, whose store (and on SQLite, the store's code) can come later. */
export interface OpenedDatabase {
  /** What the health probes (and the start-up's advice) ask of the database, answerable at once. */
  readonly probe: Pick<Store, "kind" | "ping" | "storage"> & Pick<Store["users"], "activeAdmins">;
  /** The store over the same connection; one store, however often it is asked for. */
  store(): Promise<VersionedStore>;
  /** Closes the store, or the connection if no store was asked for. */
  close(): Promise<void>;
  /** Hands back the memory the database's client keeps between requests (SQLite's page cache), for a quiet spell. */
  releaseMemory(): void;
}

/**
 * For `svc serve`, which listens between the two steps. On SQLite the file is opened, checked and
 * migrated with bun:sqlite alone, and Drizzle and the store's code load on store(): time the health
 * probes then need not wait for (bench/results.md, "Figures behind the code"). PostgreSQL's store is whole from the start (its pool is
 * the connection).
 */
export async function openDatabase(database: DatabaseConfig, options: OpenOptions = {}): Promise<OpenedDatabase> {
  if (database.kind === "postgres") {
    const store = await openStore(database, options);
    const probe = {
      kind: store.kind,
      ping: store.ping,
      storage: store.storage,
      activeAdmins: store.users.activeAdmins,
    };
    // The pool's buffers are the driver's; there is no cache of pages in this process to give back.
    return { probe, store: async () => store, close: () => store.close(), releaseMemory: () => {} };
  }
  const connection = (await import("./sqlite/connection.ts")).openSqliteConnection(database.path, options);
  let store: Promise<VersionedStore> | undefined;
  return {
    probe: {
      kind: "sqlite",
      ping: connection.ping,
      storage: connection.storageState,
      activeAdmins: async () => connection.activeAdmins(),
    },
    store: () => (store ??= import("./sqlite/store.ts").then(({ sqliteStore }) => sqliteStore(connection))),
    close: async () => (store ? (await store).close() : connection.close()),
    releaseMemory: connection.releaseMemory,
  };
}
