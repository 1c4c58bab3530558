// What every aggregate's Drizzle code does with rows: takes a select's first, names the columns that
// make a row exactly its record, reads a table a page at a time, prunes a few rows at a time, and
// answers for an id no row can have without asking the database.
import { and, gt, inArray, lt, type SQL } from "drizzle-orm";
import type { PgTable, SelectedFields } from "drizzle-orm/pg-core";
import type { SelectResultFields } from "drizzle-orm/query-builders/select.types";
import { parseId } from "../lib/ids.ts";
import type { Db, DbColumn } from "./dialect.ts";

export const first = <T>(rows: T[]): T | null => rows[0] ?? null;

/** The named columns of a table: what a select returns is then exactly the record, with no storage detail. */
export function columns<T extends object, K extends keyof T>(table: T, fields: readonly K[]): Pick<T, K> {
  return Object.fromEntries(fields.map((field) => [field, table[field]])) as Pick<T, K>;
}

/** `work` with `id` in canonical form; `absent`, without asking the database, when the text cannot be an id. */
export function withId<T>(id: string, absent: T, work: (key: string) => Promise<T>): Promise<T> {
  const key = parseId(id);
  return key ? work(key) : Promise.resolve(absent);
}

/**
 * Up to `limit` rows of the table in `key` order, after `after` (none: from the first): how `svc copy`
 * reads a table. An id-keyed table's `after` that cannot be an id starts from the first.
 */
export function pageAfter<Fields extends SelectedFields>(
  db: Db,
  table: PgTable,
  fields: Fields,
  key: DbColumn,
  limit: number,
  after: string | undefined,
  { ids }: { ids: boolean },
): Promise<SelectResultFields<Fields>[]> {
  const from = after === undefined || !ids ? after : (parseId(after) ?? undefined);
  const bound = from === undefined ? undefined : gt(key, from);
  // Drizzle's builder types lose their methods over a generic selection: built in its general types, and the
  // rows typed by the selection, which is what a select of `fields` from one table returns.
  const selection: SelectedFields = fields;
  return db.select(selection).from(table).where(bound).orderBy(key).limit(limit) as Promise<
    SelectResultFields<Fields>[]
  >;
}

/** Deletes up to `limit` rows of the table that meet `condition`, in one short statement; how many went. */
export async function pruneWhere(db: Db, table: PgTable, key: DbColumn, condition: SQL | undefined, limit: number) {
  const picked = db.select({ key }).from(table).where(condition).limit(limit);
  // The condition again: a row written since it was picked (or a live one sharing a partial key) stays.
  const gone = await db
    .delete(table)
    .where(and(inArray(key, picked), condition))
    .returning({ key });
  return gone.length;
}

/** Deletes up to `limit` rows of the table whose `column` is before `now`, in one short statement. */
export function pruneBefore(db: Db, table: PgTable, key: DbColumn, column: DbColumn, now: string, limit: number) {
  return pruneWhere(db, table, key, lt(column, now), limit);
}
