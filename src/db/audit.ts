// The audit log: who did what, recorded in the transaction of the change it describes, read newest
// first by administrators, pruned by age, and paged whole for `svc copy`.
import { and, desc, eq, gt, gte, lt, or, type SQL } from "drizzle-orm";
import type { AuditAction } from "../audit/model.ts";
import { parseId } from "../lib/ids.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { AUDIT_FIELDS } from "./records.ts";
import { columns, pruneBefore } from "./rows.ts";
import type { AuditEvent } from "./records.ts";

export type { AuditEvent } from "./records.ts";

/** Which events to read: newest first, at most `limit`, older than `before` (an event id) when given. */
export interface AuditFilter {
  action?: AuditAction;
  actorId?: string;
  targetId?: string;
  /** Events naming this user as actor or target. */
  userId?: string;
  /** Events at or after this instant. */
  since?: string;
  before?: string;
  limit: number;
}

export interface AuditStore {
  /** Records an event that goes with no change (a failed login). Changes record theirs themselves. */
  record(event: AuditEvent): Promise<void>;
  list(filter: AuditFilter): Promise<AuditEvent[]>;
  /** Forgets up to `limit` events older than `before`; how many went. */
  prune(before: string, limit: number): Promise<number>;
  /** Up to `limit` events in id order after `after` (for `svc copy`). */
  page(limit: number, after?: string): Promise<AuditEvent[]>;
}

/** Records the event in the transaction of the change it describes. */
export async function recordIn(tx: Db, { auditEvents }: Tables, event: AuditEvent | undefined): Promise<void> {
  if (event) await tx.insert(auditEvents).values(event);
}

export function auditStore({ db, run, write, tables }: Dialect): AuditStore {
  const { auditEvents } = tables;
  const auditColumns = columns(auditEvents, AUDIT_FIELDS);
  return {
    record: (event) =>
      write(async () => {
        await db.insert(auditEvents).values(event);
      }),
    list: ({ action, actorId, targetId, userId, since, before, limit }) =>
      run(async () => {
        const conditions: SQL[] = [];
        // An id that cannot be one names nobody: no event matches it.
        const ids = [actorId, targetId, userId, before].map((id) => (id === undefined ? undefined : parseId(id)));
        if (ids.some((id) => id === null)) return [];
        const [actor, target, user, beforeId] = ids;
        if (action) conditions.push(eq(auditEvents.action, action));
        if (actor) conditions.push(eq(auditEvents.actorId, actor));
        if (target) conditions.push(eq(auditEvents.targetId, target));
        if (user) conditions.push(or(eq(auditEvents.actorId, user), eq(auditEvents.targetId, user))!);
        if (since) conditions.push(gte(auditEvents.at, since));
        if (beforeId) conditions.push(lt(auditEvents.id, beforeId));
        return db
          .select(auditColumns)
          .from(auditEvents)
          .where(and(...conditions))
          .orderBy(desc(auditEvents.id))
          .limit(limit);
      }),
    prune: (before, limit) => write(() => pruneBefore(db, auditEvents, auditEvents.id, auditEvents.at, before, limit)),
    page: (limit, after) =>
      run(async () => {
        const from = after === undefined ? null : parseId(after);
        return db
          .select(auditColumns)
          .from(auditEvents)
          .where(from ? gt(auditEvents.id, from) : undefined)
          .orderBy(auditEvents.id)
          .limit(limit);
      }),
  };
}
