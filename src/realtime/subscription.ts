// One subscriber's stream: the replay its cursor asks for, then its own bounded queue of live changes,
// drained by its transport (SSE or WebSocket); it ends with an error, on shutdown, or when dropped.
import type { CategoryEventLog, LoggedChange } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import type { CategoryEvent } from "./events.ts";

export type Transport = "sse" | "ws";

/** What a subscription yields: an event, or the error it ends with. */
export type HubItem = CategoryEvent | { ending: AppError };

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

/** What a subscription needs of the hub that holds it. */
export interface SubscriptionHub {
  log: CategoryEventLog;
  metrics: { sent(count: number): void };
  /** Events waiting for one subscriber, past which it is dropped. */
  buffer: number;
  now: () => number;
  eventOf(logged: LoggedChange): CategoryEvent;
  /** The subscription ended: it no longer counts, nor gets events. */
  forget(subscription: Subscription): void;
}

/** Changes read from the log at once, when catching up or replaying. */
export const PAGE = 200;

export class Subscription implements AsyncIterableIterator<HubItem> {
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

  constructor(
    private readonly hub: SubscriptionHub,
    readonly request: SubscribeRequest,
  ) {}

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
    const wait = at - this.hub.now();
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
      this.hub.metrics.sent(1);
      resolve({ value: event, done: false });
      return true;
    }
    if (this.queue.length >= this.hub.buffer) return false;
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
    this.hub.forget(this);
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(this.take());
    }
  }

  private take(): IteratorResult<HubItem> {
    const item = this.queue.shift();
    if (item === undefined) return { value: undefined, done: true };
    if (!("ending" in item)) this.hub.metrics.sent(1);
    return { value: item, done: false };
  }

  async next(): Promise<IteratorResult<HubItem>> {
    // The replay, read a page at a time as the reader asks: the live queue waits behind it.
    while (this.replayed.length > 0 || this.replayFrom < this.replayUntil) {
      const event = this.replayed.shift();
      if (event) {
        this.hub.metrics.sent(1);
        return { value: event, done: false };
      }
      const page = (await this.hub.log.after(this.replayFrom, PAGE)).filter(({ seq }) => seq <= this.replayUntil);
      if (page.length === 0) this.replayFrom = this.replayUntil;
      else {
        this.replayFrom = page.at(-1)!.seq;
        this.replayed.push(...page.map(this.hub.eventOf));
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

export function tokenExpired(): AppError {
  return new AppError(
    "token_expired",
    "The token this subscription was opened with has expired: subscribe again with a fresh token and the last cursor.",
  );
}
