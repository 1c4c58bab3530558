// Following svc's category changes: `subscription { categoryEvents }` by Server-Sent Events, read from
// `fetch` (EventSource cannot send the Authorization header, and the page's CSP allows nothing else).
// The last event's cursor is kept in memory; whenever the stream ends (dropped, a network error, the
// token expired or revoked: renewed through api.ts first) it is opened again after a short back-off
// with `after` = that cursor, so svc replays what was missed, with no gap and nothing twice.
import { serverSentEvents } from "../../../client/src/sse.ts";
import { renewedSince, subscribe } from "./api.ts";

export interface CategoryEvent<C> {
  kind: "CREATED" | "UPDATED" | "DELETED" | "RESYNC";
  id: string;
  cursor: string;
  category: C | null;
}

export interface Follower<C> {
  /** The list must be read afresh: on a first subscription (no cursor yet), and on RESYNC. */
  reload(): void;
  /** A change, in commit order, each once. */
  change(event: CategoryEvent<C>): void;
}

/** The first wait before subscribing again, doubled after each failure in a row, up to the longest. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 15_000;

/** What ended one stream: open it again, renew the token first, or stop (no session). */
type Ending = "again" | "renew" | "stop";

interface Result<C> {
  data?: { categoryEvents: CategoryEvent<C> } | null;
  errors?: Array<{ extensions?: { code?: string } }>;
}

/** Follows category changes (`fields` is the selection of `category`) until the returned function is called. */
export function followCategoryEvents<C>(fields: string, follower: Follower<C>): () => void {
  const query = `subscription ($after: String) { categoryEvents(after: $after) { kind id cursor category { ${fields} } } }`;
  const stopped = new AbortController();
  const signal = stopped.signal;
  let cursor: string | null = null;
  let failures = 0;

  /** Opens one stream and reads it to its end. */
  async function follow(): Promise<{ ending: Ending; token: string | null }> {
    const opened = await subscribe(query, { after: cursor }, signal);
    if (!opened) return { ending: "stop", token: null };
    const { response, token } = opened;
    if (!response.headers.get("content-type")?.startsWith("text/event-stream") || !response.body) {
      const result = (await response.json().catch(() => ({}))) as Result<C>;
      return { ending: endingOf(result), token };
    }
    // Subscribed: from here on every change reaches this stream, so a list read now misses none.
    if (cursor === null) follower.reload();
    for await (const result of results<C>(response.body)) {
      const event = result.data?.categoryEvents;
      if (!event) return { ending: endingOf(result), token };
      failures = 0;
      cursor = event.cursor;
      if (event.kind === "RESYNC") follower.reload();
      else follower.change(event);
    }
    return { ending: "again", token };
  }

  function endingOf(result: Result<C>): Ending {
    const code = result.errors?.[0]?.extensions?.code;
    if (code === "TOKEN_EXPIRED" || code === "UNAUTHENTICATED") return "renew";
    // Text that is no cursor: start afresh (and read the list again).
    if (code === "BAD_USER_INPUT") cursor = null;
    return "again";
  }

  void (async () => {
    while (!signal.aborted) {
      let ending: Ending = "again";
      try {
        const followed = await follow();
        ending = followed.ending;
        if (ending === "renew" && !(await renewedSince(followed.token))) ending = "stop";
      } catch {
        // A network error, or the stream aborted: subscribe again unless stopped.
      }
      if (ending === "stop" || signal.aborted) return;
      await pause(Math.min(FIRST_WAIT_MS * 2 ** failures, LONGEST_WAIT_MS), signal);
      failures++;
    }
  })();
  return () => stopped.abort();
}

/** The results of a graphql-sse stream: each `next` event's data, until `complete` or the stream's end. */
async function* results<C>(body: ReadableStream<Uint8Array>): AsyncGenerator<Result<C>> {
  for await (const { event, data } of serverSentEvents(body)) {
    if (event === "complete") return;
    if (event === "next" && data) yield JSON.parse(data) as Result<C>;
  }
}

/** Waits `ms`, or less when stopped. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal.addEventListener("abort", stop, { once: true });
  });
}
