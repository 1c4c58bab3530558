// Failed-login throttling, kept in the database so every instance counts the same attempts.
// Per account: after maxFailures consecutive failures, blocks that double with each further failure,
// capped at backoffMax, so no block lasts forever. Per client: a coarser cap on failures in a window.
//
// An attempt is reserved (counted as a failure) before its password is checked, in one atomic step per
// key, and a success gives the reservation back. So however many attempts arrive at once, on one
// instance or several, at most maxFailures guesses at an account are ever checked before its block.
// An attempt refused while the account's reservations are still in flight on this instance waits for
// them (bounded): a success among them frees the account, so right passwords sent together all get in.
import type { LoginThrottleConfig } from "../config/index.ts";
import type { ThrottleRecord, ThrottleStore, ThrottleTransition } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { AttemptsInFlight, type WaitLimits } from "./attempts-in-flight.ts";

/** A reserved attempt. Disposed (`using`) once its check is done, whatever the outcome. */
export interface Reservation extends Disposable {
  /** The password was right: the account's count is cleared, the client's attempt given back. */
  succeeded(): Promise<void>;
  /**
   * The attempt was no failure, but not the success that clears the account either (a right password
   * whose second step is still to come): given back as if never made, the failures before it kept.
   */
  released(): Promise<void>;
}

export interface LoginThrottle {
  /**
   * Counts one attempt against the account and the client before the password is checked. While the
   * account is blocked by attempts still in flight on this instance, waits for them (within bounds).
   * Throws 429 `too_many_requests` with Retry-After while either is blocked; nothing is counted then.
   */
  reserve(accountKey: string, clientKey: string): Promise<Reservation>;
  /** Throws 429 `too_many_requests` with Retry-After while the client is blocked (the per-client rule). */
  checkClient(clientKey: string): Promise<void>;
  /**
   * Counts one failure against the client, after the fact. For attempts that are cheap to check and
   * hopeless to guess (a 256-bit refresh token): a burst gets a few past the limit, and that is all.
   */
  clientFailed(clientKey: string): Promise<void>;
}

/** A reservation's outcome: counted (with the block it set, if it reached the limit), or refused. */
type Reserved = { counted: true; blockedUntil: string | null } | { counted: false; waitMs: number };

export function createLoginThrottle(
  store: ThrottleStore,
  settings: LoginThrottleConfig,
  now = () => Date.now(),
  waitLimits?: WaitLimits,
): LoginThrottle {
  const inFlight = new AttemptsInFlight(waitLimits);
  const accountDelay = (failures: number) =>
    Math.min(settings.backoffBaseMs * 2 ** Math.min(failures - settings.maxFailures, 30), settings.backoffMaxMs);

  /** One more attempt on `key` unless it is blocked; the block starts with the attempt that reaches `limit`. */
  const reserveStep =
    (key: string, at: number, limit: number, blockFor: (failures: number) => number, windowMs?: number) =>
    (stored: ThrottleRecord | null): ThrottleTransition<Reserved> => {
      // A client's count starts afresh once its last attempt is older than the window.
      const current =
        stored && windowMs !== undefined && Date.parse(stored.lastFailureAt) < at - windowMs ? null : stored;
      const blockedFor = current?.blockedUntil ? Date.parse(current.blockedUntil) - at : 0;
      if (blockedFor > 0) return { next: stored, result: { counted: false, waitMs: blockedFor } };
      const failures = (current?.failures ?? 0) + 1;
      const blockedUntil = failures >= limit ? new Date(at + blockFor(failures)).toISOString() : null;
      return {
        next: { key, failures, lastFailureAt: new Date(at).toISOString(), blockedUntil },
        result: { counted: true, blockedUntil },
      };
    };

  /**
   * Gives back one attempt. A block standing now was set by a reservation still counted (a key is
   * never reserved while blocked), so once the count is below the limit again it is lifted.
   */
  const releaseStep =
    (limit: number) =>
    (current: ThrottleRecord | null): ThrottleTransition<void> => {
      if (!current || current.failures <= 1) return { next: null, result: undefined };
      const failures = current.failures - 1;
      return {
        next: { ...current, failures, blockedUntil: failures < limit ? null : current.blockedUntil },
        result: undefined,
      };
    };

  /**
   * Gives back an attempt on an account that is not cleared: one failure fewer, and the block it set (if
   * it reached the limit) lifted, since no later attempt was counted while that block stood. A block set
   * by a later attempt (past this one's own) stays.
   */
  const giveBackStep =
    (setBlock: string | null) =>
    (current: ThrottleRecord | null): ThrottleTransition<void> => {
      if (!current || current.failures <= 1) return { next: null, result: undefined };
      const failures = current.failures - 1;
      const lifted = failures < settings.maxFailures || (setBlock !== null && current.blockedUntil === setBlock);
      return { next: { ...current, failures, blockedUntil: lifted ? null : current.blockedUntil }, result: undefined };
    };

  const releaseAccount = (key: string) => store.transition(key, releaseStep(settings.maxFailures));
  const releaseClient = (key: string) => store.transition(key, releaseStep(settings.clientMaxFailures));

  /** One try at reserving: null when counted, else which key is blocked and for how long. */
  async function reserveOnce(accountKey: string, clientKey: string) {
    const at = now();
    const account = await store.transition(accountKey, reserveStep(accountKey, at, settings.maxFailures, accountDelay));
    if (!account.counted) return { refused: "account" as const, waitMs: account.waitMs };
    const client = await store.transition(
      clientKey,
      reserveStep(clientKey, at, settings.clientMaxFailures, () => settings.clientWindowMs, settings.clientWindowMs),
    );
    if (client.counted) return { refused: null, blockedUntil: account.blockedUntil };
    await releaseAccount(accountKey);
    return { refused: "client" as const, waitMs: client.waitMs };
  }

  /**
   * The reservation made; the attempt was counted in flight (inFlight.enter) before its first step.
   * `setBlock`: the account's block this attempt set by reaching the limit, if it did.
   */
  function reservation(accountKey: string, clientKey: string, setBlock: string | null): Reservation {
    let done = false;
    const finish = (succeeded: boolean) => {
      if (done) return;
      done = true;
      inFlight.leave(accountKey, succeeded);
    };
    return {
      // The account's step and the client's together: two keys, no order between them, and on SQLite one
      // commit (one wait for the disk) for both.
      async succeeded() {
        await both(store.clear(accountKey), releaseClient(clientKey));
        // At once, not when the caller is done: the attempts waiting may go in now.
        finish(true);
      },
      async released() {
        await both(store.transition(accountKey, giveBackStep(setBlock)), releaseClient(clientKey));
        // The block this attempt set may be lifted: the attempts waiting may go in now.
        finish(true);
      },
      [Symbol.dispose]: () => finish(false),
    };
  }

  return {
    async reserve(accountKey, clientKey) {
      const deadline = inFlight.deadline();
      for (;;) {
        // In flight from before its first step: the account's reservation and the client's are two round
        // trips on PostgreSQL, and an attempt that found the account full between them, with nothing in
        // flight here yet, would be refused instead of waiting for this one.
        inFlight.enter(accountKey);
        let outcome: Awaited<ReturnType<typeof reserveOnce>>;
        try {
          outcome = await reserveOnce(accountKey, clientKey);
        } catch (error) {
          inFlight.leave(accountKey, false);
          throw error;
        }
        if (outcome.refused === null) return reservation(accountKey, clientKey, outcome.blockedUntil);
        inFlight.leave(accountKey, false);
        // A blocked client waits for nothing; a blocked account, for its attempts in flight here.
        if (outcome.refused === "client" || !(await inFlight.wait(accountKey, deadline))) throw blocked(outcome.waitMs);
      }
    },

    async checkClient(clientKey) {
      const state = await store.get(clientKey);
      const blockedFor = state?.blockedUntil ? Date.parse(state.blockedUntil) - now() : 0;
      if (blockedFor > 0) throw blocked(blockedFor);
    },

    async clientFailed(clientKey) {
      await store.transition(
        clientKey,
        reserveStep(
          clientKey,
          now(),
          settings.clientMaxFailures,
          () => settings.clientWindowMs,
          settings.clientWindowMs,
        ),
      );
    },
  };
}

/** Once both steps have ended: the first one's failure, if either failed (neither is left running unheard). */
async function both(first: Promise<unknown>, second: Promise<unknown>): Promise<void> {
  const failed = (await Promise.allSettled([first, second])).find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

function blocked(waitMs: number): AppError {
  return tooManyRequests(waitMs, (seconds) => `Too many failed attempts; try again in ${seconds} s.`);
}

/** 429 too_many_requests, with Retry-After the whole seconds in `waitMs`; `said` words it with them. */
export function tooManyRequests(waitMs: number, said: (seconds: number) => string): AppError {
  const seconds = Math.ceil(waitMs / 1000);
  return new AppError("too_many_requests", said(seconds), { headers: { "retry-after": String(seconds) } });
}
