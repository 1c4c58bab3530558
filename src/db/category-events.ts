// The category event log: every committed change to a category, numbered in commit order by the
// categories' own triggers (migration category_event_triggers), kept for a while so that a subscriber
// can resume after a reconnect (`categoryEvents(after:)`). Read here; pruned by count and age.
import { and, asc, desc, eq, gt, inArray, isNull, lt, max, min, or, sql } from "drizzle-orm";
import type { CategoryChange } from "../realtime/events.ts";
import type { CategoryRecord } from "./categories.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { newIdentity } from "./identity.ts";

/** A change as the log holds it: its number, and what it did. */
export interface LoggedChange {
  seq: number;
  change: CategoryChange;
}

export interface CategoryEventLog {
  /** This database's identity: made when it is, kept across restore and `svc copy` (backups go by it). */
  identity(): Promise<string>;
  /**
   * The log's epoch, which cursors carry: made with the database, made anew by a restore and by a bulk load
   * (`svc copy`), whose numbers go on from another history. A cursor of another epoch gets RESYNC.
   */
  epoch(): Promise<string>;
  /** Up to `limit` changes numbered after `seq`, oldest first. */
  after(seq: number, limit: number): Promise<LoggedChange[]>;
  /** The first and last numbers the log holds; null for both when it holds none. */
  bounds(): Promise<{ first: number | null; last: number | null }>;
  /**
   * Forgets up to `limit` of the oldest changes past the newest `keep` or logged before `before` (an ISO
   * instant), but never the newest one (the log's last number is where a subscriber resumes from). How
   * many went.
   */
  prune(keep: number, before: string, limit: number): Promise<number>;
}

/** The row as the triggers write it: the table's column names, timestamps as each database spells them. */
interface LoggedRow {
  id: string;
  name: string;
  description: string | null;
  color_hex: string;
  icon: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** The category a logged row holds, in the contract's terms (ISO timestamps in UTC). */
export function categoryOfRow(row: LoggedRow): CategoryRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    colorHex: row.color_hex,
    icon: row.icon,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    version: row.version,
  };
}

/**
 * Within a bulk load: its data is `identity`'s (the source's; a new database's when not given), and its
 * numbers go on from nothing, so earlier cursors must not resume here: a new epoch.
 */
export async function renewEpoch(tx: Db, { categoryEvents, svcDatabase }: Tables, identity?: string): Promise<void> {
  await tx.delete(categoryEvents);
  await tx.delete(svcDatabase);
  await tx.insert(svcDatabase).values({ id: identity ?? newIdentity(), epoch: newIdentity() });
}

export function categoryEventLog({ db, run, write, tables }: Dialect): CategoryEventLog {
  const { categoryEvents: events, svcDatabase } = tables;
  // Ordered: should two instances each have made one at once, they agree on the first.
  const read = async () =>
    (
      await db
        .select({ id: svcDatabase.id, epoch: svcDatabase.epoch })
        .from(svcDatabase)
        .orderBy(svcDatabase.id)
        .limit(1)
    )[0];
  /** Makes the row again, or its epoch: a write, unlike the read every call makes. */
  const repair = (known: { id: string; epoch: string | null } | undefined) =>
    write(async () => {
      if (known === undefined) {
        await db.insert(svcDatabase).values({ id: newIdentity(), epoch: newIdentity() }).onConflictDoNothing();
      } else {
        await db
          .update(svcDatabase)
          .set({ epoch: newIdentity() })
          .where(and(eq(svcDatabase.id, known.id), isNull(svcDatabase.epoch)));
      }
      return read();
    });
  /** The database's row: made by its migrations; made here should it have gone (a table emptied by hand). */
  const row = async () => {
    let known = await run(read);
    if (known === undefined || known.epoch === null) known = await repair(known);
    return { id: known?.id ?? "", epoch: known?.epoch ?? "" };
  };
  return {
    identity: async () => (await row()).id,
    epoch: async () => (await row()).epoch,
    after: (seq, limit) =>
      run(async () => {
        const rows = await db
          .select({ seq: events.seq, kind: events.kind, id: events.categoryId, row: events.row })
          .from(events)
          .where(gt(events.seq, seq))
          .orderBy(asc(events.seq))
          .limit(limit);
        return rows.map(({ seq, kind, id, row }) => ({
          seq: Number(seq),
          change:
            kind === "DELETED" || row === null
              ? { kind: "DELETED", id, category: null }
              : { kind, id, category: categoryOfRow(JSON.parse(row) as LoggedRow) },
        }));
      }),
    bounds: () =>
      run(async () => {
        const [row] = await db.select({ first: min(events.seq), last: max(events.seq) }).from(events);
        const number = (value: unknown) => (value === null || value === undefined ? null : Number(value));
        return { first: number(row?.first), last: number(row?.last) };
      }),
    prune: (keep, before, limit) =>
      write(async () => {
        const [newest] = await db.select({ seq: events.seq }).from(events).orderBy(desc(events.seq)).limit(1);
        if (!newest) return 0;
        const last = Number(newest.seq);
        const older = or(sql`${events.seq} <= ${last - keep}`, lt(events.at, before));
        const oldest = db
          .select({ seq: events.seq })
          .from(events)
          .where(and(lt(events.seq, last), older))
          .orderBy(asc(events.seq))
          .limit(limit);
        const gone = await db.delete(events).where(inArray(events.seq, oldest)).returning({ seq: events.seq });
        return gone.length;
      }),
  };
}
