// How listeners learn that category changes have committed (what changed, they read from the log:
// category-events.ts). On SQLite (one process owns the file's writes) the store tells this process's
// listeners once a write has committed. On PostgreSQL the table's trigger logs the change and
// announces its number with pg_notify from the writing statement itself (migration
// category_event_triggers), so a rolled-back write sends nothing and every instance listening on the
// channel hears every commit, its own included.
import type { SQL } from "bun";
import type { ChangeFeed } from "../realtime/events.ts";

/** What a dialect adds to the feed: the writer's side. */
export interface DialectFeed extends ChangeFeed {
  /** Once a write has committed: SQLite tells this process's listeners (PostgreSQL's trigger has told every instance). */
  committed(): void;
}

interface Listener {
  changed: () => void;
  resync: () => void;
}

/** SQLite's feed: within the process, after the commit. */
export function localFeed(): DialectFeed {
  const listeners = new Set<Listener>();
  return {
    committed() {
      for (const listener of listeners) listener.changed();
    },
    async listen(changed, resync) {
      const listener = { changed, resync };
      listeners.add(listener);
      return async () => void listeners.delete(listener);
    },
  };
}

export const CHANNEL = "svc_category_events";

/**
 * PostgreSQL's feed: LISTEN on one connection of Bun's client (it reconnects by itself; every
 * reconnect after the first LISTEN is a resync, since notifications sent meanwhile are lost). A
 * notification carries only the change's number: listeners read the log (category-events.ts).
 */
export function notifyFeed(client: SQL): DialectFeed {
  const listeners = new Set<Listener>();
  let subscription: Promise<SQL.ListenSubscription> | null = null;
  let acknowledgements = 0;

  const received = () => {
    for (const listener of listeners) listener.changed();
  };
  function acknowledged() {
    if (acknowledgements++ > 0) for (const listener of listeners) listener.resync();
  }

  return {
    committed() {},
    async listen(changed, resync) {
      const listener = { changed, resync };
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
