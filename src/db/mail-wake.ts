// The in-process wake-up of the mail senders (src/mail/sender.ts): a transaction that enqueued mail
// (mail-outbox.ts) tells them once it has committed (wakingSenders), so a mail leaves in a moment rather
// than at the next poll. Other instances poll. The wake runs WAKE_DELAY_MS later, never within the request
// that caused it: the claim and the send then fall after the answer, whether or not the request wrote a
// mail (a decoy wakes alike). Wakes due together run once.
import type { Dialect } from "./dialect.ts";

const WAKE_DELAY_MS = 10;
const enqueuedIn = new WeakSet<object>();

/** Marks the transaction `tx` as one that, once committed, wakes the senders (an enqueue, a decoy). */
export function wakeAfterCommit(tx: object): void {
  enqueuedIn.add(tx);
}

const wakeListeners = new Set<() => void>();
let wakeTimer: ReturnType<typeof setTimeout> | undefined;

/** Calls `listener` whenever mail was enqueued in this process and committed; returns the unsubscribe. */
export function onMailEnqueued(listener: () => void): () => void {
  wakeListeners.add(listener);
  return () => wakeListeners.delete(listener);
}

/** Whether a wake is due: a commit asked for one, and it has not run yet. */
export function wakeScheduled(): boolean {
  return wakeTimer !== undefined;
}

/** Wakes the senders WAKE_DELAY_MS from now, unless a wake is due already. */
export function wakeSenders(): void {
  if (wakeTimer !== undefined) return;
  wakeTimer = setTimeout(() => {
    wakeTimer = undefined;
    for (const listener of wakeListeners) listener();
  }, WAKE_DELAY_MS);
  wakeTimer.unref?.();
}

/** The dialect whose transactions wake the senders after a commit that enqueued mail (drizzle-store.ts). */
export function wakingSenders(dialect: Dialect): Dialect {
  const transaction: Dialect["transaction"] = async (work, options) => {
    let enqueued = false;
    const result = await dialect.transaction(async (tx) => {
      const done = await work(tx);
      enqueued = enqueuedIn.delete(tx);
      return done;
    }, options);
    if (enqueued) wakeSenders();
    return result;
  };
  return { ...dialect, transaction };
}
