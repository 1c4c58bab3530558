// The connection as Drizzle sees it, with its statements kept. Drizzle's bun:sqlite driver compiles a
// new statement for every query that was not prepared by name: every write (a login compiles eight:
// the throttle, the session, the refresh token, the audit event...), each program then waiting for the
// collector to finalize its wrapper. Kept by their text, each is compiled once (docs/performance.md, "What
// keeps svc near the floor").
import type { Database, Statement } from "bun:sqlite";
import { setBounded } from "../../lib/bounded-map.ts";

/** Distinct statements kept: svc's writes use a few dozen. */
const KEPT_STATEMENTS = 256;
/** Longer texts are one of a kind (the multi-row inserts of `svc copy`): compiled, not kept. */
const LONGEST_KEPT_CHARS = 4096;

/** What Drizzle's driver calls on its client. */
export type DrizzleClient = Pick<Database, "prepare" | "exec" | "transaction">;

export interface KeptStatements {
  client: DrizzleClient;
  /** Finalizes every kept statement: before the connection closes, so that it closes at once. */
  finalize(): void;
}

export function keptStatements(database: Database, capacity = KEPT_STATEMENTS): KeptStatements {
  const kept = new Map<string, Statement>();
  // A statement runs to completion within one synchronous call (svc never iterates one), so callers
  // can share it: each run binds all of its own parameters.
  function prepare(sql: string): Statement {
    if (sql.length > LONGEST_KEPT_CHARS) return database.prepare(sql);
    let statement = kept.get(sql);
    if (!statement) {
      statement = database.prepare(sql);
      // One pushed out is not finalized: a query Drizzle prepared by name may still hold it.
      setBounded(kept, sql, statement, capacity);
    }
    return statement;
  }
  const client = {
    prepare,
    exec: (sql: string) => database.exec(sql),
    transaction: database.transaction.bind(database),
  } as unknown as DrizzleClient; // Database's generic signatures; Drizzle calls only these three as written above.
  return {
    client,
    finalize() {
      for (const statement of kept.values()) statement.finalize();
      kept.clear();
    },
  };
}
