// What every aggregate's Drizzle code does with rows: takes a select's first, names the columns that
// make a row exactly its record, and prunes expired ones a few at a time.
import { and, inArray, lt } from "drizzle-orm";
import type { Db, DbColumn, Tables } from "./dialect.ts";

export const first = <T>(rows: T[]): T | null => rows[0] ?? null;

/** The named columns of a table: what a select returns is then exactly the record, with no storage detail. */
export function columns<T extends object, K extends keyof T>(table: T, fields: readonly K[]): Pick<T, K> {
  return Object.fromEntries(fields.map((field) => [field, table[field]])) as Pick<T, K>;
}

type PrunableTable = Tables[
  | "sessions"
  | "refreshTokens"
  | "passwordResets"
  | "auditEvents"
  | "idempotencyKeys"
  | "invitations"];

/** Deletes up to `limit` rows of the table whose `column` is before `now`, in one short statement. */
export async function pruneBefore(
  db: Db,
  table: PrunableTable,
  key: DbColumn,
  column: DbColumn,
  now: string,
  limit: number,
) {
  const expired = db.select({ key }).from(table).where(lt(column, now)).limit(limit);
  // The expiry again: where `key` is only part of the row's identity, a live row may share it.
  return (
    await db
      .delete(table)
      .where(and(inArray(key, expired), lt(column, now)))
      .returning({ key })
  ).length;
}
