// This process's subscribers to category changes. The store's feed delivers each committed change
// (from every instance, on PostgreSQL) and the hub copies it into every subscriber's own bounded
// queue, which its transport (SSE or WebSocket) drains: publishing never waits for a subscriber, and
// one whose queue is full (it reads slower than changes come) is dropped. Subscriptions are capped per
// user and in all, and the token each was opened with is checked again every few seconds: once it is
// revoked, expired, or its account deleted or disabled, the subscription ends with UNAUTHENTICATED.
import { AppError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { type CategoryEvent, type ChangeFeed, RESYNC } from "./events.ts";

export type Transport = "sse" | "ws";

/** What a subscription yields: an event, or the error it ends with. */
export type HubItem = CategoryEvent | { ending: AppError };

export interface HubMetrics {
  sent(count: number): void;
  dropped(reason: "slow" | "revoked"): void;
}

export interface HubOptions {
  feed: ChangeFeed;
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
}

export interface SubscribeRequest {
  /** Whose subscription this is, for the per-user cap: "user:<id>", or "client:<address>" without a token. */
  owner: string;
  /** The Authorization it was opened with, checked again while it is open; null without a token. */
  authorization: string | null;
  transport: Transport;
}

export type Hub = ReturnType<typeof createHub>;

export function createHub(options: HubOptions) {
  const { feed, perUser, max, buffer, recheckMs, stillValid, metrics, logger } = options;
  const open = new Set<Subscription>();
  const perOwner = new Map<string, number>();
  let listening: Promise<() => Promise<void>> | null = null;
  let recheck: ReturnType<typeof setInterval> | null = null;
  let closed = false;

  class Subscription implements AsyncIterableIterator<HubItem> {
    private readonly queue: HubItem[] = [];
    private waiting: ((result: IteratorResult<HubItem>) => void) | null = null;
    private finished = false;

    constructor(readonly request: SubscribeRequest) {}

    /** Queues the event; false when the queue is full (the subscriber is too slow). */
    offer(event: CategoryEvent): boolean {
      if (this.finished) return true;
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
      if (ending) this.queue.push({ ending });
      else if (!drain) this.queue.length = 0;
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

    next(): Promise<IteratorResult<HubItem>> {
      if (this.queue.length > 0 || this.finished) return Promise.resolve(this.take());
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

  function deliver(event: CategoryEvent) {
    for (const subscription of open) {
      if (subscription.offer(event)) continue;
      // Its queue is full: it cannot keep up, and nobody else may wait for it.
      metrics.dropped("slow");
      logger.warn(
        { owner: subscription.request.owner, transport: subscription.request.transport, queued: buffer },
        "subscriber dropped: it reads slower than categories change",
      );
      subscription.end();
    }
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
      const ending = new AppError(
        "unauthorized",
        "The token this subscription was opened with is no longer valid (expired or revoked, or its account was deleted or disabled).",
      );
      for (const subscription of group) {
        metrics.dropped("revoked");
        subscription.end(ending);
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

  return {
    /** A new subscription, once the feed is listening. Throws AppError `too_many_subscriptions` past a cap. */
    async subscribe(request: SubscribeRequest): Promise<AsyncIterableIterator<HubItem>> {
      const subscription = new Subscription(request);
      if (closed) {
        subscription.end();
        return subscription;
      }
      listening ??= feed.listen(deliver, () => deliver(RESYNC));
      try {
        await listening;
      } catch (error) {
        listening = null;
        throw new AppError("database_unavailable", "Changes cannot be followed now: the database is not answering.", {
          cause: error,
        });
      }
      // The caps are checked and the subscription counted in one step, with no await between.
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
      open.add(subscription);
      perOwner.set(request.owner, (perOwner.get(request.owner) ?? 0) + 1);
      if (request.authorization !== null) startRechecks();
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
      const stop = listening;
      listening = null;
      if (stop) await (await stop.catch(() => async () => {}))();
    },
  };
}
