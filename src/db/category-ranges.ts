// Categories in an order of the client's choosing (name, creation or update time, either way), filtered by
// a part of the name, read a slice at a time from a place in that order: what a GraphQL connection pages
// through, forwards or backwards. Places are values, not rows, so a page after a deleted category is
// still a page.
import { and, asc, count, desc, sql, type SQL } from "drizzle-orm";
import type { Dialect } from "./dialect.ts";
import { CATEGORY_FIELDS, nameKey, type CategoryRecord } from "./records.ts";
import { columns } from "./rows.ts";

export type CategoryOrderField = "name" | "createdAt" | "updatedAt";

/** By the field (names without regard to case), then by id: every category has one place. */
export interface CategoryOrder {
  field: CategoryOrderField;
  descending: boolean;
}

/** A place in an order: the field's value there (the name, or the ISO-8601 time) and the category's id. */
export interface CategoryPosition {
  value: string;
  id: string;
}

/** The categories between two places of an order (each left out, either open), and how many of them. */
export interface CategoryRange {
  order: CategoryOrder;
  /** Only categories whose name holds this, without regard to case; empty or absent: every one. */
  search?: string;
  after?: CategoryPosition;
  before?: CategoryPosition;
  /** At most this many: the first of the range, or with `fromEnd` the last (still in the order). */
  limit: number;
  fromEnd?: boolean;
}

export interface CategoryRanges {
  /** The range's categories in its order. `after` and `before` must be places of that order. */
  range(range: CategoryRange): Promise<CategoryRecord[]>;
  /** How many categories there are whose name holds `search` (as range reads it): all, without. */
  count(search?: string): Promise<number>;
}

export function categoryRanges({ db, run, tables }: Dialect): CategoryRanges {
  const { categories } = tables;
  const categoryColumns = columns(categories, CATEGORY_FIELDS);
  const sortColumns = { name: categories.nameKey, createdAt: categories.createdAt, updatedAt: categories.updatedAt };

  /** Names holding `search`: LIKE on the stored name key, its wildcards taken literally. */
  function holding(search: string | undefined): SQL | undefined {
    const key = search === undefined ? "" : nameKey(search);
    if (key === "") return undefined;
    const pattern = `%${key.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return sql`${categories.nameKey} like ${pattern} escape '\\'`;
  }

  return {
    range({ order, search, after, before, limit, fromEnd = false }) {
      const column = sortColumns[order.field];
      const place = ({ value, id }: CategoryPosition) =>
        sql`(${order.field === "name" ? nameKey(value) : value}, ${id})`;
      const row = sql`(${column}, ${categories.id})`;
      // Descending, what comes after a place sorts below it.
      const [above, below] = order.descending ? [before, after] : [after, before];
      const where = and(
        holding(search),
        above && sql`${row} > ${place(above)}`,
        below && sql`${row} < ${place(below)}`,
      );
      const backwards = order.descending !== fromEnd;
      const direction = backwards ? desc : asc;
      return run(async () => {
        const rows = await db
          .select(categoryColumns)
          .from(categories)
          .where(where)
          .orderBy(direction(column), direction(categories.id))
          .limit(limit);
        return fromEnd ? rows.reverse() : rows;
      });
    },
    count: (search) => run(async () => (await db.select({ n: count() }).from(categories).where(holding(search)))[0]!.n),
  };
}
