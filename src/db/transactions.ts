// The transactions the aggregates run: held to a deadline, and undone from within when a
// compare-and-set finds it lost.
import { type AuditEvent, recordIn } from "./audit.ts";
import type { Db, Dialect } from "./dialect.ts";
import { ReferenceGone } from "./store-errors.ts";

/** A transaction of a few statements, held to run's deadline (a bulk load is not). */
export const TIMED = { timed: true } as const;

/** Thrown inside `runUndoable`'s work to undo the transaction. */
export const ROLL_BACK = Symbol("roll back");

/** A timed transaction whose work may throw ROLL_BACK: then nothing it wrote stays, and the answer is `undone`. */
export async function runUndoable<T, U>(transaction: Dialect["transaction"], work: (tx: Db) => Promise<T>, undone: U) {
  try {
    return await transaction(work, TIMED);
  } catch (error) {
    if (error === ROLL_BACK) return undone;
    throw error;
  }
}

/**
 * A timed transaction that writes for a user: true once it committed, false when the user went while it ran
 * (a foreign key found nothing: ReferenceGone), as if it had never been asked.
 */
export async function runForUser(transaction: Dialect["transaction"], work: (tx: Db) => Promise<unknown>) {
  try {
    await transaction(work, TIMED);
    return true;
  } catch (error) {
    if (error instanceof ReferenceGone) return false;
    throw error;
  }
}

/**
 * Inserts a row of a user's with its audit event, in one timed transaction. `insert` answers the row it wrote,
 * or nothing when the row clashed with one there: then "taken", and nothing is written. null: the user went
 * while it ran (runForUser).
 */
export async function insertForUser<T>(
  { transaction, tables }: Pick<Dialect, "transaction" | "tables">,
  audit: AuditEvent,
  insert: (tx: Db) => Promise<T | null | undefined>,
): Promise<T | "taken" | null> {
  let inserted: T | null | undefined;
  const committed = await runForUser(transaction, async (tx) => {
    inserted = await insert(tx);
    if (inserted != null) await recordIn(tx, tables, audit);
  });
  return committed ? (inserted ?? "taken") : null;
}
