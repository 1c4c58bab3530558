// Following svc's category changes: the client's `categories.subscribe`, which reads them by Server-Sent Events
// from `fetch` (EventSource cannot send the Authorization header, and the page's CSP allows nothing else),
// opens the stream again after a short back-off whenever it ends (dropped, the token expired or revoked: renewed
// first), after the last event's cursor, so svc replays what was missed, with no gap and nothing twice.
import type { CategoryEvent } from "@svc/client";
import { client } from "./api.ts";

export type { CategoryEvent };

export interface Follower {
  /** The list must be read afresh: once subscribed without a cursor yet, and on RESYNC. */
  reload(): void;
  /** A change, in commit order, each once. */
  change(event: CategoryEvent): void;
}

/** Follows category changes until the returned function is called (or the session ends). */
export function followCategoryEvents(follower: Follower): () => void {
  return client.categories.subscribe(
    (event) => (event.kind === "RESYNC" ? follower.reload() : follower.change(event)),
    {
      // Subscribed: from here on every change reaches this stream, so a list read now misses none.
      onOpen: ({ fresh }) => {
        if (fresh) follower.reload();
      },
    },
  );
}
