// What subscribers are told: a category created, updated or deleted, or RESYNC when changes may have
// been missed (the database connection that carries them was lost and is back).
import type { CategoryRecord } from "../db/store.ts";

export type CategoryEventKind = "CREATED" | "UPDATED" | "DELETED" | "RESYNC";

export interface CategoryEvent {
  kind: CategoryEventKind;
  /** The category's id; "" for RESYNC. */
  id: string;
  /** The category after the change; null for DELETED and RESYNC. */
  category: CategoryRecord | null;
}

/** A committed change, as a store announces it. */
export type CategoryChange =
  | { kind: "CREATED" | "UPDATED"; id: string; category: CategoryRecord }
  | { kind: "DELETED"; id: string; category: null };

export const RESYNC: CategoryEvent = Object.freeze({ kind: "RESYNC", id: "", category: null });

/** The committed category changes of one database, from every instance writing to it. */
export interface ChangeFeed {
  /**
   * Delivers every change committed from now on to `deliver`, in commit order per writer, and calls
   * `resync` when changes may have been missed (after a lost connection is back). Resolves once
   * listening, with the function that stops it.
   */
  listen(deliver: (change: CategoryChange) => void, resync: () => void): Promise<() => Promise<void>>;
}

/** CategoryEvent under the name the generated resolver types import it by (theirs is taken). */
export type CategoryEventModel = CategoryEvent;
