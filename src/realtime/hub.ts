// This process's subscribers to category changes. The store's feed says when changes commit (from every
// instance, on PostgreSQL); the hub reads them from the log in commit order and copies each into every
// subscriber's own bounded queue, which its transport (SSE or WebSocket) drains: publishing never
// waits for a subscriber, and one whose queue is full (it reads slower than changes come) is dropped.
//
// A subscription given a cursor (`after`) first replays the log after it, up to where the hub stood
// when it subscribed, then goes on with the live changes past that point: no gap, no duplicate. A
// cursor the log no longer covers, or from another database, gets one RESYNC first.
//
// Subscriptions are capped per user and in all. One opened with a token ends with TOKEN_EXPIRED when
// that token expires, and with UNAUTHENTICATED once a check (every few seconds) finds it revoked or its
// account deleted or disabled: a client re-subscribes with a fresh token and its last cursor.
import type { CategoryEventLog, LoggedChange } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import type { Logger } from "../observability/log.ts";
import { formatCursor, parseCursor } from "./cursors.ts";
import type { CategoryEvent, ChangeFeed } from "./events.ts";
import { tokenRechecks } from "./token-rechecks.ts";
import {
  type HubItem,
  PAGE,
  type SubscribeRequest,
  Subscription,
  type SubscriptionHub,
  type Transport,
} from "./subscription.ts";

export type { HubItem, SubscribeRequest, Transport } from "./subscription.ts";

export interface HubMetrics {
  sent(count: number): void;
  dropped(reason: "slow" | "revoked"): void;
}

export interface HubOptions {
  feed: ChangeFeed;
  log: CategoryEventLog;
  /** SVC_SUBSCRIPTIONS_PER_USER: open subscriptions one user (or one anonymous client address) may hold. */
  perUser: number;
  /** SVC_SUBSCRIPTIONS_MAX: open subscriptions on this instance. */
  max: number;
  /** Events waiting for one subscriber, past which it is dropped. */
  buffer: number;
  /** How often the tokens of open subscriptions are checked again. */
  recheckMs: number;
  /** Whether the token still authenticates; "unknown" when it cannot be told now (the database is away). */
  recheckToken(authorization: string): Promise<boolean | "unknown">;
  metrics: HubMetrics;
  logger: Logger;
  now?: () => number;
}

export type Hub = ReturnType<typeof createHub>;

export function createHub(options: HubOptions) {
  const { feed, log, perUser, max, buffer, recheckMs, recheckToken, metrics, logger, now = Date.now } = options;
  const open = new Set<Subscription>();
  const perOwner = new Map<string, number>();
  let listening: Promise<void> | null = null;
  let stopListening: (() => Promise<void>) | null = null;
  let closed = false;
  /** The database's identity and the last number handed to subscribers: where the live stream stands. */
  let database = "";
  let lastSeq = 0;

  const eventOf = ({ seq, change }: LoggedChange): CategoryEvent => ({
    ...change,
    cursor: formatCursor({ database, seq }),
  });
  const rechecks = tokenRechecks({ open, recheckToken, recheckMs, metrics, logger, now });
  const resync = (): CategoryEvent => ({
    kind: "RESYNC",
    id: "",
    category: null,
    cursor: formatCursor({ database, seq: lastSeq }),
  });

  const subscriptionHub: SubscriptionHub = { log, metrics, buffer, now, eventOf, forget };

  function forget(subscription: Subscription) {
    if (!open.delete(subscription)) return;
    const owner = subscription.request.owner;
    const left = (perOwner.get(owner) ?? 1) - 1;
    if (left > 0) perOwner.set(owner, left);
    else perOwner.delete(owner);
    if (open.size === 0) rechecks.stop();
  }

  /** Offers the event to every subscriber; a RESYNC is numbered Infinity (nobody holds it already). */
  function deliver(event: CategoryEvent, seq: number) {
    for (const subscription of open) {
      if (subscription.offer(event, seq)) continue;
      // Its queue is full: it cannot keep up, and nobody else may wait for it.
      metrics.dropped("slow");
      logger.warn(
        { owner: subscription.request.owner, transport: subscription.request.transport, queued: buffer },
        "subscriber dropped: it reads slower than categories change",
      );
      subscription.end();
    }
  }

  /**
   * Hands on every change logged after lastSeq, in order; one catch-up at a time, and one more after it
   * when told of changes meanwhile. After a resync (notices may have been lost), a log that no longer
   * holds what followed lastSeq, or a database that is now another (a bulk load), is one RESYNC.
   */
  let catching: Promise<void> | null = null;
  let again = false;
  let checkGap = false;
  /** Until the hub knows where the log stands, notices wait: a catch-up from 0 would hand out old changes again. */
  let positioned = false;
  function catchUp(afterResync = false): void {
    if (afterResync) checkGap = true;
    if (catching || !positioned) {
      again = true;
      return;
    }
    catching = (async () => {
      do {
        again = false;
        if (checkGap) {
          checkGap = false;
          const [identity, { first, last }] = await Promise.all([log.epoch(), log.bounds()]);
          if (identity !== database || (first !== null && first > lastSeq + 1) || (last ?? 0) < lastSeq) {
            database = identity;
            lastSeq = last ?? 0;
            deliver(resync(), Number.POSITIVE_INFINITY);
            continue;
          }
        }
        for (;;) {
          const page = await log.after(lastSeq, PAGE);
          for (const logged of page) {
            if (logged.seq <= lastSeq) continue;
            lastSeq = logged.seq;
            deliver(eventOf(logged), logged.seq);
          }
          if (page.length < PAGE) break;
        }
      } while (again);
    })()
      .catch((error: unknown) => {
        // Read again once the database answers: the next notice (or resync) comes with it.
        checkGap = true;
        logger.warn({ err: error }, "could not read the category event log; subscribers wait for the next change");
      })
      .finally(() => {
        catching = null;
        if (again) catchUp();
      });
  }

  /** Listens to the feed, then reads where the log stands: a change committed in between is caught up by its notice. */
  async function startListening(): Promise<void> {
    stopListening = await feed.listen(
      () => catchUp(),
      () => catchUp(true),
    );
    const [identity, { last }] = await Promise.all([log.epoch(), log.bounds()]);
    database = identity;
    lastSeq = last ?? 0;
    positioned = true;
    // A notice that came while the position was read: what it announced may lie past it.
    if (again) catchUp();
  }

  /** Where a subscription with this cursor starts: a replay from its number, or a RESYNC (the log no longer covers it). */
  async function resumeFrom(after: string): Promise<number | "resync"> {
    const cursor = parseCursor(after);
    if (cursor.database !== database) return "resync";
    if (cursor.seq === lastSeq) return cursor.seq;
    const { first, last } = await log.bounds();
    // Ahead of this instance (another one handed it out first) is fine while the log holds it; past the
    // log's end, it is from another history of this database (restored from a backup).
    if (cursor.seq > (last ?? 0)) return "resync";
    // A number before the first one kept may have been forgotten: what followed it is not all there.
    return first !== null && cursor.seq >= first - 1 ? cursor.seq : "resync";
  }

  return {
    /** A new subscription, once the feed is listening. Throws AppError `too_many_subscriptions` past a cap. */
    async subscribe(request: SubscribeRequest): Promise<AsyncIterableIterator<HubItem>> {
      const subscription = new Subscription(subscriptionHub, request);
      if (closed) {
        subscription.end();
        return subscription;
      }
      if (request.after !== null) parseCursor(request.after);
      listening ??= startListening();
      try {
        await listening;
      } catch (error) {
        listening = null;
        throw new AppError("database_unavailable", "Changes cannot be followed now: the database is not answering.", {
          cause: error,
        });
      }
      const start = request.after === null ? lastSeq : await resumeFrom(request.after);
      // The caps are checked and the subscription counted in one step, with no await between; from the
      // same step on, every change past `until` reaches its live queue.
      if ((perOwner.get(request.owner) ?? 0) >= perUser) {
        throw new AppError(
          "too_many_subscriptions",
          `At most ${perUser} subscriptions may be open at once per user; end one first.`,
        );
      }
      if (open.size >= max) {
        throw new AppError(
          "too_many_subscriptions",
          `This instance holds its limit of ${max} subscriptions; retry later.`,
          {
            headers: { "retry-after": "5" },
          },
        );
      }
      const until = lastSeq;
      if (start === "resync") subscription.lead(resync());
      else subscription.replay(start, until);
      open.add(subscription);
      perOwner.set(request.owner, (perOwner.get(request.owner) ?? 0) + 1);
      if (request.authorization !== null) rechecks.start();
      if (request.expiresAt !== null) subscription.expireAt(request.expiresAt);
      return subscription;
    },

    /** Open subscriptions, by transport. */
    counts(): Record<Transport, number> {
      const counts = { sse: 0, ws: 0 };
      for (const subscription of open) counts[subscription.request.transport]++;
      return counts;
    },

    /** Ends every subscription (their streams complete) and stops listening: for shutdown. */
    async close(): Promise<void> {
      closed = true;
      for (const subscription of [...open]) subscription.end(undefined, true);
      rechecks.stop();
      const started = listening;
      listening = null;
      if (started) await started.catch(() => {});
      const stop = stopListening;
      stopListening = null;
      if (stop) await stop();
      await catching;
    },
  };
}
