// Following category events by cursor over Server-Sent Events: what one stream's end means (subscribe again,
// renew the token first, or stop and tell onError), and the connection's state as it goes.
import type { Auth } from "./auth.js";
import { CATEGORY } from "./category-fragment.js";
import { graphqlError, type GraphQLErrorEntry, problemError, SvcError } from "./errors.js";
import type { Http } from "./http.js";
import type { CategoryEvent } from "./schema.generated.js";
import { serverSentEvents } from "./sse.js";
import { answersNoCors, browserOrigin, CORS_TITLE, corsOrNetwork, streamBroken } from "./subscription-failures.js";

/**
 * Where a subscription stands. `connecting`: a stream is being opened. `open`: every change from now on reaches
 * the listener (`fresh` as onOpen's). `reconnecting`: the last stream ended or was not opened, for `reason`;
 * the next attempt is at `nextAttemptAt`. `closed`: over, by `stop()` (error null) or by a refusal (the error
 * onError had).
 */
export type SubscriptionState =
  | { status: "connecting" }
  | { status: "open"; fresh: boolean }
  | { status: "reconnecting"; reason: SvcError; nextAttemptAt: Date }
  | { status: "closed"; error: SvcError | null };

export interface SubscribeOptions {
  /** The cursor of the last event you handled: events after it come first, then the live ones. */
  after?: string | null;
  /**
   * Called when the subscription cannot go on and stops: the session is over, svc refused the subscription
   * (too many open, a 429, a cursor that is no cursor, any other 4xx), or the browser refused the request
   * (CORS: the page's origin not in SVC_CORS_ORIGINS). Failures worth retrying are retried, and only show in
   * onState as `reconnecting`.
   */
  onError?: (error: SvcError) => void;
  /**
   * Called each time a stream opens: from then on every change reaches it. `fresh` is true when it opened
   * without a cursor (no event received yet, and no `after` given): changes before it are not sent, so read
   * the list then (every time it says fresh), not before subscribing, and no change falls between the two.
   */
  onOpen?: (info: { fresh: boolean }) => void;
  /** Called with each new state: connecting, open, reconnecting (why, and when next), closed. */
  onState?: (state: SubscriptionState) => void;
}

/** What a test may replace: the pause between attempts, the page's origin (a browser's `location`), the probe. */
export interface FollowDeps {
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
  pageOrigin?: string | null;
  /** Whether svc's origin answers a request that needs no CORS permission (a no-cors GET). */
  reachable?: (origin: string) => Promise<boolean>;
}

/** The first wait before subscribing again after a failure, doubled with each one in a row, up to the longest. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 15_000;

const SUBSCRIPTION = `subscription ($after: String) { categoryEvents(after: $after) { kind id cursor category { ...Category } } } ${CATEGORY}`;

/** How one attempt ended: subscribe again after a pause (`wait`, when svc said), renew the token first, or stop. */
type Ending = { again: SvcError; wait?: number } | { renew: SvcError } | { stop: SvcError };

interface Next {
  data?: { categoryEvents: CategoryEvent } | null;
  errors?: GraphQLErrorEntry[];
}

/** svc's codes that say "not now" rather than "no": a fault, a database away, no answer at all. */
const WORTH_RETRYING = new Set(["internal", "database_unavailable", "storage_full", "network_error"]);

/** What an error ending a stream or refusing one leads to. */
function endingOf(error: SvcError): Ending {
  if (error.status === 401 || error.graphqlCode === "TOKEN_EXPIRED" || error.graphqlCode === "UNAUTHENTICATED") {
    return { renew: error };
  }
  // A proxy's 502 page while svc restarts, svc's own 503: again. Any other refusal (a 429 included) stops.
  const retried =
    (WORTH_RETRYING.has(error.code) && error.title !== CORS_TITLE) ||
    (error.code === "unexpected_response" && error.status >= 500);
  if (!retried) return { stop: error };
  return { again: error, wait: error.retryAfter === null ? undefined : error.retryAfter * 1000 };
}

const streamEnded = () =>
  new SvcError({
    status: 200,
    code: "network_error",
    title: "Stream ended",
    detail: "svc ended the stream (stopping, a subscriber dropped for reading slowly, or a proxy's timeout)",
  });

const sessionOver = () =>
  new SvcError({ status: 401, code: "unauthorized", title: "Unauthorized", detail: "The session is over." });

/** Follows the events until `signal` aborts or a refusal stops it. */
export async function follow(
  http: Http,
  auth: Auth,
  listener: (event: CategoryEvent) => void,
  options: SubscribeOptions,
  signal: AbortSignal,
  deps: FollowDeps = {},
): Promise<void> {
  const wait = deps.wait ?? pause;
  const pageOrigin = deps.pageOrigin === undefined ? browserOrigin() : deps.pageOrigin;
  const reachable = deps.reachable ?? answersNoCors;
  let cursor = options.after ?? null;
  let failures = 0;
  /**
   * A renewal since the last event: a second in a row means svc refuses fresh tokens too. Not reset when a
   * stream opens: svc (or a proxy) may open one and refuse its token at once, which would loop without a pause.
   */
  let renewedSinceEvent = false;
  let closed = false;
  /** When the last stream opened; one that stayed open a while starts the back-off afresh. */
  let openedAt = 0;
  /** Attempts in a row that looked like CORS's refusal (svc reachable, its answer unreadable). */
  let corsLike = 0;
  const tell = (state: SubscriptionState) => {
    if (!closed) report(() => options.onState?.(state));
  };
  const close = (error: SvcError | null) => {
    if (closed) return;
    // The state first: an onError that stops the subscription (as a live list does) must not be reported as
    // closed without its error.
    tell({ status: "closed", error });
    closed = true;
    if (error) report(() => options.onError?.(error));
  };
  // Closed as stop() is called, not once an attempt under way notices.
  signal.addEventListener("abort", () => close(null), { once: true });

  /** Opens one stream and hands on its events until it ends. */
  const once = async (token: string | null): Promise<Ending> => {
    const response = await http.send(
      {
        method: "POST",
        path: "/graphql",
        body: { query: SUBSCRIPTION, variables: { after: cursor } },
        headers: { accept: "text/event-stream" },
        signal,
      },
      token,
    );
    const type = response.headers.get("content-type") ?? "";
    const stream = type.startsWith("text/event-stream") && response.body !== null;
    // svc refuses a subscription past its caps with a 429 that may still be an event stream of one error.
    if (stream && !response.ok) return endingOf(graphqlError(await firstErrors(response), response));
    if (!stream) {
      if (!type.includes("json") || type.includes("problem+json")) return endingOf(await problemError(response));
      const answer = (await response.json().catch(() => ({}))) as Next;
      return endingOf(graphqlError(answer.errors ?? [], response));
    }
    tell({ status: "open", fresh: cursor === null });
    report(() => options.onOpen?.({ fresh: cursor === null }));
    openedAt = Date.now();
    for await (const message of serverSentEvents(response.body!, signal)) {
      // Stopped by a listener: the rest of what was read in the same chunk is not handed on.
      if (signal.aborted) break;
      if (message.event === "complete") break;
      if (message.event !== "next") continue;
      const next = JSON.parse(message.data) as Next;
      const event = next.data?.categoryEvents;
      if (!event) return endingOf(graphqlError(next.errors ?? [], response));
      failures = 0;
      renewedSinceEvent = false;
      if (event.kind !== "RESYNC" && cursor !== null && !isAfter(event.cursor, cursor)) continue;
      cursor = event.cursor;
      report(() => listener(event));
    }
    return { again: streamEnded() };
  };

  /** One attempt: the token, then the stream; a failure with no answer is network_error, or CORS's refusal. */
  const attempt = async (): Promise<{ token: string | null; ending: Ending }> => {
    let token: string | null = null;
    try {
      token = await auth.token();
      return { token, ending: await once(token) };
    } catch (error) {
      const failure = error instanceof SvcError ? error : streamBroken(error);
      if (failure.code !== "network_error" || pageOrigin === null || signal.aborted) {
        return { token, ending: endingOf(failure) };
      }
      return { token, ending: endingOf(await corsOrNetwork(http.baseUrl, pageOrigin, failure, reachable)) };
    }
  };

  tell({ status: "connecting" });
  while (!signal.aborted) {
    const { token, ending: first } = await attempt();
    let ending = first;
    if (signal.aborted) break;
    if (openedAt > 0 && Date.now() - openedAt >= STAYED_OPEN_MS) failures = 0;
    openedAt = 0;
    // What looks like CORS may be a proxy's error page without CORS headers while svc restarts behind it:
    // retried with the back-off, and a refusal only once it has lasted CORS_ATTEMPTS attempts in a row.
    const cors = "stop" in ending && ending.stop.title === CORS_TITLE;
    corsLike = cors ? corsLike + 1 : 0;
    if (cors && corsLike < CORS_ATTEMPTS && "stop" in ending) ending = { again: ending.stop };
    if ("stop" in ending) return close(ending.stop);
    if ("renew" in ending) {
      const renewed = await auth.renewAfter(token).catch(() => undefined);
      if (renewed === null) return close(sessionOver());
      // At once after one renewal; a renewal again before any event (svc, or a proxy, refusing fresh
      // tokens too) pauses like any failure. undefined: the renewal itself failed (network).
      if (renewed !== undefined && !renewedSinceEvent && !signal.aborted) {
        renewedSinceEvent = true;
        tell({ status: "reconnecting", reason: ending.renew, nextAttemptAt: new Date() });
        tell({ status: "connecting" });
        continue;
      }
      ending = { again: ending.renew };
    }
    const backOff = Math.min(FIRST_WAIT_MS * 2 ** failures, LONGEST_WAIT_MS);
    const ms = Math.max(ending.wait ?? 0, backOff);
    tell({ status: "reconnecting", reason: ending.again, nextAttemptAt: new Date(Date.now() + ms) });
    await wait(ms, signal);
    failures++;
    if (!signal.aborted) tell({ status: "connecting" });
  }
  close(null);
}

/** Attempts in a row that must look like CORS before it is reported (with the back-off, about 8 seconds). */
const CORS_ATTEMPTS = 6;
/** A stream open this long was a working one: the next failure waits the first wait again. */
const STAYED_OPEN_MS = 30_000;

/** The errors of a refusal sent as an event stream: its first result's. */
async function firstErrors(response: Response): Promise<GraphQLErrorEntry[]> {
  for await (const message of serverSentEvents(response.body!)) {
    if (message.event === "next") return (JSON.parse(message.data) as Next).errors ?? [];
  }
  return [];
}

/**
 * A callback that throws has still been handed its news: the error is reported (as an uncaught error would be)
 * and the subscription goes on, rather than receiving the same event again and again.
 */
function report(call: () => void): void {
  try {
    call();
  } catch (error) {
    const reportError = (globalThis as { reportError?: (error: unknown) => void }).reportError;
    if (reportError) reportError(error);
    else console.error(error);
  }
}

/**
 * Whether `cursor` comes after `last`: cursors of one database sort as text. One from another database
 * (after a restore) is taken as new.
 */
function isAfter(cursor: string, last: string): boolean {
  const database = (value: string) => value.slice(value.indexOf(".") + 1);
  return database(cursor) !== database(last) || cursor > last;
}

/** Waits `ms`, or less when stopped. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
