// How committed category changes reach listeners. On SQLite (one process owns the file's writes) the
// store hands each change to this process's listeners once its transaction has committed. On
// PostgreSQL the writing transaction itself sends it with pg_notify, so a rolled-back write sends
// nothing and every instance listening on the channel hears every commit, its own included.
import type { SQL } from "bun";
import { sql } from "drizzle-orm";
import type { CategoryChange, ChangeFeed } from "../realtime/events.ts";
import type { CategoryRecord } from "./store.ts";
import type { Db } from "./dialect.ts";

/** What a dialect adds to the feed: the writer's side. */
export interface DialectFeed extends ChangeFeed {
  /** Inside the writing transaction: PostgreSQL sends the change with the commit. */
  announce(tx: Db, change: CategoryChange): Promise<void>;
  /** Once the transaction has committed: SQLite hands the change to this process's listeners. */
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
    announce: async () => {},
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
/** pg_notify refuses payloads of 8000 bytes or more. */
const PAYLOAD_MAX_BYTES = 7900;

/**
 * PostgreSQL's feed: NOTIFY in the writing transaction, LISTEN on one connection of Bun's client (it
 * reconnects by itself; every reconnect after the first LISTEN is a resync, since notifications sent
 * meanwhile are lost; so is a notification that cannot be read). A change too large for a notification goes without its category, which the
 * listening side reads (`find`); with svc's field limits a category is at most about 3.5 KB.
 */
export function notifyFeed(client: SQL, find: (id: string) => Promise<CategoryRecord | null>): DialectFeed {
  const listeners = new Set<Listener>();
  let subscription: Promise<SQL.ListenSubscription> | null = null;
  let acknowledgements = 0;

  // A notification that cannot be read, or a category that cannot be fetched: a change was missed.
  const missed = () => {
    for (const listener of listeners) listener.resync();
  };

  function received(payload: string) {
    let change: CategoryChange & { large?: true };
    try {
      change = JSON.parse(payload);
    } catch {
      missed();
      return;
    }
    if (!change.large) {
      for (const listener of listeners) listener.deliver(change);
      return;
    }
    find(change.id).then((category) => {
      // Deleted meanwhile: its own DELETED follows.
      if (!category) return;
      const whole = { kind: change.kind, id: change.id, category } as CategoryChange;
      for (const listener of listeners) listener.deliver(whole);
    }, missed);
  }

  function acknowledged() {
    if (acknowledgements++ > 0) missed();
  }

  return {
    async announce(tx, change) {
      let payload = JSON.stringify(change);
      if (Buffer.byteLength(payload) > PAYLOAD_MAX_BYTES)
        payload = JSON.stringify({ kind: change.kind, id: change.id, category: null, large: true });
      await tx.execute(sql`select pg_notify(${CHANNEL}, ${payload})`);
    },
    committed() {},
    async listen(deliver, resync) {
      const listener = { deliver, resync };
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
