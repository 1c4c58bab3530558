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
import { AppError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { formatCursor, parseCursor } from "./cursors.ts";
import type { CategoryEvent, ChangeFeed } from "./events.ts";

export type Transport = "sse" | "ws";

/** What a subscription yields: an event, or the error it ends with. */
export type HubItem = CategoryEvent | { ending: AppError };

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
  stillValid(authorization: string): Promise<boolean | "unknown">;
  metrics: HubMetrics;
  logger: Logger;
  now?: () => number;
}

export interface SubscribeRequest {
  /** Whose subscription this is, for the per-user cap: "user:<id>", or "client:<address>" without a token. */
  owner: string;
  /** The Authorization it was opened with, checked again while it is open; null without a token. */
  authorization: string | null;
  /** When that token expires (ms since the epoch); null without one. */
  expiresAt: number | null;
  transport: Transport;
  /** The cursor to resume after (an event's, as the client got it); null: live changes only. */
  after: string | null;
}

export type Hub = ReturnType<typeof createHub>;

/** Changes read from the log at once, when catching up or replaying. */
const PAGE = 200;

export function createHub(options: HubOptions) {
  const { feed, log, perUser, max, buffer, recheckMs, stillValid, metrics, logger, now = Date.now } = options;
  const open = new Set<Subscription>();
  const perOwner = new Map<string, number>();
  let listening: Promise<void> | null = null;
  let stopListening: (() => Promise<void>) | null = null;
  let recheck: ReturnType<typeof setInterval> | null = null;
  let closed = false;
  /** The database's identity and the last number handed to subscribers: where the live stream stands. */
  let database = "";
  let lastSeq = 0;

  const eventOf = ({ seq, change }: LoggedChange): CategoryEvent => ({
    ...change,
    cursor: formatCursor({ database, seq }),
  });
  const resync = (): CategoryEvent => ({
    kind: "RESYNC",
    id: "",
    category: null,
    cursor: formatCursor({ database, seq: lastSeq }),
  });

  class Subscription implements AsyncIterableIterator<HubItem> {
    private readonly queue: HubItem[] = [];
    private waiting: ((result: IteratorResult<HubItem>) => void) | null = null;
    private finished = false;
    private expiry: ReturnType<typeof setTimeout> | null = null;
    /** Replayed first: the log after `replayFrom`, up to `replayUntil` (where the live queue begins). */
    private replayed: CategoryEvent[] = [];
    private replayFrom = 0;
    private replayUntil = 0;
    /** Live changes up to this number are the client's already (its cursor is ahead of this instance). */
    private skipThrough = 0;

    constructor(readonly request: SubscribeRequest) {}

    /** Replays the log after `from` up to `until` before the live events, which begin after `until`. */
    replay(from: number, until: number): void {
      this.replayFrom = from;
      this.replayUntil = Math.max(from, until);
      this.skipThrough = from;
    }

    /** Comes before anything else (a RESYNC). */
    lead(event: CategoryEvent): void {
      this.replayed.unshift(event);
    }

    /** Ends it with TOKEN_EXPIRED when its token expires. */
    expireAt(at: number): void {
      const end = () => this.end(tokenExpired());
      const wait = at - now();
      if (wait <= 0) return end();
      this.expiry = setTimeout(end, Math.min(wait, 2 ** 31 - 1));
      this.expiry.unref?.();
    }

    /** Queues the event (numbered `seq`); false when the queue is full (the subscriber is too slow). */
    offer(event: CategoryEvent, seq: number): boolean {
      if (this.finished || seq <= this.skipThrough) return true;
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = null;
        metrics.sent(1);
        resolve({ value: event, done: false });
        return true;
      }
      if (this.queue.length >= buffer) return false;
      this.queue.push(event);
      return true;
    }

    /**
     * Ends it. With `ending`, or `drain` (shutdown), after the events already queued; otherwise at once,
     * its queue dropped (a reader too slow for them, or gone).
     */
    end(ending?: AppError, drain = false): void {
      if (this.finished) return;
      if (this.expiry) clearTimeout(this.expiry);
      if (ending) this.queue.push({ ending });
      else if (!drain) {
        this.queue.length = 0;
        this.replayed.length = 0;
        this.replayFrom = this.replayUntil;
      }
      this.finished = true;
      forget(this);
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = null;
        resolve(this.take());
      }
    }

    private take(): IteratorResult<HubItem> {
      const item = this.queue.shift();
      if (item === undefined) return { value: undefined, done: true };
      if (!("ending" in item)) metrics.sent(1);
      return { value: item, done: false };
    }

    async next(): Promise<IteratorResult<HubItem>> {
      // The replay, read a page at a time as the reader asks: the live queue waits behind it.
      while (this.replayed.length > 0 || this.replayFrom < this.replayUntil) {
        const event = this.replayed.shift();
        if (event) {
          metrics.sent(1);
          return { value: event, done: false };
        }
        const page = (await log.after(this.replayFrom, PAGE)).filter(({ seq }) => seq <= this.replayUntil);
        if (page.length === 0) this.replayFrom = this.replayUntil;
        else {
          this.replayFrom = page.at(-1)!.seq;
          this.replayed.push(...page.map(eventOf));
        }
      }
      if (this.queue.length > 0 || this.finished) return this.take();
      return new Promise((resolve) => (this.waiting = resolve));
    }

    /** The transport is done with it (the client went away, or the stream completed). */
    return(): Promise<IteratorResult<HubItem>> {
      this.end();
      return Promise.resolve({ value: undefined, done: true });
    }

    [Symbol.asyncIterator]() {
      return this;
    }
  }

  function forget(subscription: Subscription) {
    if (!open.delete(subscription)) return;
    const owner = subscription.request.owner;
    const left = (perOwner.get(owner) ?? 1) - 1;
    if (left > 0) perOwner.set(owner, left);
    else perOwner.delete(owner);
    if (open.size === 0 && recheck) {
      clearInterval(recheck);
      recheck = null;
    }
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

  /** Every open subscription's token, asked once per distinct token. */
  async function checkTokens() {
    const byToken = new Map<string, Subscription[]>();
    for (const subscription of open) {
      const authorization = subscription.request.authorization;
      if (authorization === null) continue;
      const group = byToken.get(authorization);
      if (group) group.push(subscription);
      else byToken.set(authorization, [subscription]);
    }
    for (const [authorization, group] of byToken) {
      if ((await stillValid(authorization)) !== false) continue;
      for (const subscription of group) {
        const expiresAt = subscription.request.expiresAt;
        if (expiresAt !== null && expiresAt <= now()) {
          subscription.end(tokenExpired());
          continue;
        }
        metrics.dropped("revoked");
        subscription.end(
          new AppError(
            "unauthorized",
            "The token this subscription was opened with is no longer valid (revoked, or its account was deleted or disabled).",
          ),
        );
      }
    }
  }

  let checking = false;
  function startRechecks() {
    if (recheck) return;
    recheck = setInterval(() => {
      if (checking) return;
      checking = true;
      checkTokens()
        .catch((error: unknown) => logger.warn({ err: error }, "could not check the tokens of open subscriptions"))
        .finally(() => (checking = false));
    }, recheckMs);
    recheck.unref?.();
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
      const subscription = new Subscription(request);
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
      if (request.authorization !== null) startRechecks();
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
      if (recheck) clearInterval(recheck);
      recheck = null;
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

function tokenExpired(): AppError {
  return new AppError(
    "token_expired",
    "The token this subscription was opened with has expired: subscribe again with a fresh token and the last cursor.",
  );
}
