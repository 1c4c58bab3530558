// How committed category changes reach listeners. On SQLite (one process owns the file's writes) the
// store hands each change to this process's listeners once it has committed. On PostgreSQL a trigger
// on the table announces each change with pg_notify from the writing statement itself (migration
// category_events), so a rolled-back write sends nothing and every instance listening on the channel
// hears every commit, its own included.
import type { SQL } from "bun";
import type { CategoryChange, ChangeFeed } from "../realtime/events.ts";
import type { CategoryRecord } from "./categories.ts";

/** What a dialect adds to the feed: the writer's side. */
export interface DialectFeed extends ChangeFeed {
  /** Once a write has committed: SQLite hands the change to this process's listeners (PostgreSQL's trigger has sent it). */
  committed(change: CategoryChange): void;
}

interface Listener {
  deliver: (change: CategoryChange) => void;
  resync: () => void;
}

/** SQLite's feed: within the process, after the commit. */
export function localFeed(): DialectFeed {
  const listeners = new Set<Listener>();
  return {
    committed(change) {
      for (const listener of listeners) listener.deliver(change);
    },
    async listen(deliver, resync) {
      const listener = { deliver, resync };
      listeners.add(listener);
      return async () => void listeners.delete(listener);
    },
  };
}

export const CHANNEL = "svc_category_events";

/** The row as the trigger sends it (row_to_json: column names, timestamps in ISO form with an offset). */
interface NotifiedRow {
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

function categoryOf(row: NotifiedRow): CategoryRecord {
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
 * PostgreSQL's feed: LISTEN on one connection of Bun's client (it reconnects by itself; every
 * reconnect after the first LISTEN is a resync, since notifications sent meanwhile are lost; so is one
 * that cannot be read). A row too large for a notification comes as its id, and is read here; changes
 * are handed on one after another, in the order they came, reads included.
 */
export function notifyFeed(client: SQL, find: (id: string) => Promise<CategoryRecord | null>): DialectFeed {
  const listeners = new Set<Listener>();
  let subscription: Promise<SQL.ListenSubscription> | null = null;
  let acknowledgements = 0;
  let order: Promise<void> = Promise.resolve();

  const missed = () => {
    for (const listener of listeners) listener.resync();
  };
  const deliver = (change: CategoryChange) => {
    for (const listener of listeners) listener.deliver(change);
  };

  async function handle(payload: string) {
    let note: { kind: CategoryChange["kind"]; id: string; row?: NotifiedRow | null; large?: true };
    try {
      note = JSON.parse(payload);
    } catch {
      return missed();
    }
    if (note.kind === "DELETED") return deliver({ kind: "DELETED", id: note.id, category: null });
    if (note.row) return deliver({ kind: note.kind, id: note.id, category: categoryOf(note.row) });
    // Too large to send: read it (deleted meanwhile, its own DELETED follows).
    const category = await find(note.id);
    if (category) deliver({ kind: note.kind, id: note.id, category });
  }

  function received(payload: string) {
    order = order.then(() => handle(payload)).catch(missed);
  }

  function acknowledged() {
    if (acknowledgements++ > 0) missed();
  }

  return {
    committed() {},
    async listen(deliverTo, resync) {
      const listener = { deliver: deliverTo, resync };
      listeners.add(listener);
      subscription ??= client.listen(CHANNEL, received, acknowledged);
      try {
        await subscription;
      } catch (error) {
        listeners.delete(listener);
        subscription = null;
        acknowledgements = 0;
        throw error;
      }
      return async () => {
        listeners.delete(listener);
        if (listeners.size > 0 || !subscription) return;
        const ending = subscription;
        subscription = null;
        acknowledgements = 0;
        await (await ending).unlisten();
      };
    },
  };
}
