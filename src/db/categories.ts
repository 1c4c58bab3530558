// Categories: listed by name without regard to case, changed under a version, and each change handed
// to the feed realtime subscribers hear, once committed.
import { and, eq, sql } from "drizzle-orm";
import type { ErrorCode } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import type { CategoryChange } from "../realtime/events.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import { categoryRanges, type CategoryRanges } from "./category-ranges.ts";
import type { Clash, Db, Dialect } from "./dialect.ts";
import { CATEGORY_FIELDS, nameKey } from "./records.ts";
import { columns, first } from "./rows.ts";
import { StaleVersion } from "./store-errors.ts";
import { TIMED } from "./transactions.ts";
import type { CategoryRecord } from "./records.ts";

export type { CategoryRecord } from "./records.ts";

/** A category to insert: the store sets updatedAt to createdAt and version to 1. */
export type NewCategory = Omit<CategoryRecord, "updatedAt" | "version">;

export type CategoryPatch = Partial<Pick<CategoryRecord, "name" | "description" | "colorHex" | "icon">>;

/** A page of categories in list order: at most `first` of them, and with `after`, only those after it. */
export interface CategoryPage {
  first?: number | null;
  /** The category the page starts after (its name and id give its place in the order). */
  after?: Pick<CategoryRecord, "id" | "name">;
}

/** Categories, and (category-ranges.ts) slices of them in any order, for connections. */
export interface CategoryStore extends CategoryRanges {
  /** Categories by name without regard to case (then id): every one, or the page asked for. */
  list(page?: CategoryPage): Promise<CategoryRecord[]>;
  /** null: no category has this id. */
  findById(id: string): Promise<CategoryRecord | null>;
  /** Throws AppError `category_name_taken` when the name clashes without regard to case. */
  create(category: NewCategory): Promise<CategoryRecord>;
  /**
   * Applies the patch and adds 1 to the version; with `ifVersion`, only while the version is still
   * that one, else throws StaleVersion. null: no category has this id. Throws `category_name_taken`.
   */
  update(id: string, patch: CategoryPatch, updatedAt: string, ifVersion?: number): Promise<CategoryRecord | null>;
  /**
   * Deletes it, recording `audit` in the same change; with `ifVersion`, only while the version is
   * still that one, else throws StaleVersion. false: no category has this id.
   */
  delete(id: string, audit?: AuditEvent, ifVersion?: number): Promise<boolean>;
}

const categoryClash = (): ErrorCode => "category_name_taken";

export function categoryStore(dialect: Dialect): CategoryStore {
  const { db, run, write, tables, transaction, feed } = dialect;
  const { categories } = tables;
  const categoryColumns = columns(categories, CATEGORY_FIELDS);
  const byId = db
    .select(categoryColumns)
    .from(categories)
    .where(eq(categories.id, sql.placeholder("id")))
    .prepare("category_by_id");

  /**
   * A write and the change it makes, handed on once committed (SQLite); on PostgreSQL the table's
   * trigger announces it from the writing statement. `atomic` work (more than one statement) runs in
   * a transaction.
   */
  async function announcing<T>(
    work: (tx: Db) => Promise<T>,
    changeOf: (result: T) => CategoryChange | null,
    { clash, atomic = false }: { clash?: Clash; atomic?: boolean } = {},
  ): Promise<T> {
    const result = atomic ? await transaction(work, { ...TIMED, clash }) : await write(() => work(db), clash);
    const change = changeOf(result);
    if (change) feed.committed();
    return result;
  }

  return {
    ...categoryRanges(dialect),
    list: ({ first: limit, after } = {}) =>
      run(async () => {
        const query = db.select(categoryColumns).from(categories).$dynamic();
        if (after) query.where(sql`(${categories.nameKey}, ${categories.id}) > (${nameKey(after.name)}, ${after.id})`);
        query.orderBy(categories.nameKey, categories.id);
        if (limit !== undefined && limit !== null) query.limit(limit);
        return query;
      }),
    findById(id) {
      const key = parseId(id);
      return key ? run(async () => first(await byId.execute({ id: key }))) : Promise.resolve(null);
    },
    create: (category) =>
      announcing(
        async (tx) => {
          const row = { ...category, nameKey: nameKey(category.name), updatedAt: category.createdAt };
          return (await tx.insert(categories).values(row).returning(categoryColumns))[0]!;
        },
        (created) => ({ kind: "CREATED", id: created.id, category: created }),
        { clash: categoryClash },
      ),
    update(id, patch, updatedAt, ifVersion) {
      const key = parseId(id);
      if (!key) return Promise.resolve(null);
      const changes = {
        ...patch,
        ...(patch.name !== undefined && { nameKey: nameKey(patch.name) }),
        updatedAt,
        version: sql`${categories.version} + 1`,
      };
      return announcing(
        async (tx) => {
          const updated = first(
            await tx.update(categories).set(changes).where(atVersion(key, ifVersion)).returning(categoryColumns),
          );
          return updated ?? (await missingOrStale(tx, key, ifVersion));
        },
        (updated) => updated && { kind: "UPDATED", id: updated.id, category: updated },
        { clash: categoryClash },
      );
    },
    delete(id, audit, ifVersion) {
      const key = parseId(id);
      if (!key) return Promise.resolve(false);
      return announcing(
        async (tx) => {
          const removed = await tx.delete(categories).where(atVersion(key, ifVersion)).returning({ id: categories.id });
          if (removed.length === 0) return (await missingOrStale(tx, key, ifVersion)) ?? false;
          if (audit) await recordIn(tx, tables, audit);
          return true;
        },
        (removed) => (removed ? { kind: "DELETED", id: key, category: null } : null),
        { atomic: audit !== undefined },
      );
    },
  };

  function atVersion(key: string, ifVersion: number | undefined) {
    return ifVersion === undefined
      ? eq(categories.id, key)
      : and(eq(categories.id, key), eq(categories.version, ifVersion));
  }

  /** Why a change found no row: none has the id (null), or it is at another version (throws). */
  async function missingOrStale(tx: Db, key: string, ifVersion: number | undefined): Promise<null> {
    if (ifVersion === undefined) return null;
    const [row] = await tx.select({ version: categories.version }).from(categories).where(eq(categories.id, key));
    if (row) throw new StaleVersion(row.version);
    return null;
  }
}
