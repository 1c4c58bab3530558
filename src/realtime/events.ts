// What subscribers are told: a category created, updated or deleted, or RESYNC when changes may have
// been missed (a cursor older than the log, or from another database). Each event carries its
// cursor: where a subscription resumes from (`categoryEvents(after:)`).
import type { CategoryRecord } from "../db/records.ts";

export type CategoryEventKind = "CREATED" | "UPDATED" | "DELETED" | "RESYNC";

export interface CategoryEvent {
  kind: CategoryEventKind;
  /** The category's id; "" for RESYNC. */
  id: string;
  /** The category after the change; null for DELETED and RESYNC. */
  category: CategoryRecord | null;
  /** Opaque; increasing in commit order. A RESYNC's is where to resume once the categories are read again. */
  cursor: string;
}

/** A committed change, as the log holds it. */
export type CategoryChange =
  | { kind: "CREATED" | "UPDATED"; id: string; category: CategoryRecord }
  | { kind: "DELETED"; id: string; category: null };

/** Tells when category changes have committed on one database, from every instance writing to it. */
export interface ChangeFeed {
  /**
   * Calls `changed` after changes commit (once per commit or fewer: it says "read the log", not what
   * changed), and `resync` when notices may have been missed (after a lost connection is back).
   * Resolves once listening, with the function that stops it.
   */
  listen(changed: () => void, resync: () => void): Promise<() => Promise<void>>;
}

/** CategoryEvent under the name the generated resolver types import it by (theirs is taken). */
export type CategoryEventModel = CategoryEvent;
