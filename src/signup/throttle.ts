// Sign-ups from one client: SVC_SIGNUP_CLIENT_MAX attempts per SVC_SIGNUP_CLIENT_WINDOW, whatever their
// outcome, then 429 until that window ends. Attempts, not failures: a scraper probing which usernames are
// taken (409 each) is held to the same count as one making accounts. Kept by the login throttle's store
// (the same table, keys of their own), whose compare-and-set transitions let every instance on one
// database count the same attempts.
import type { SignupConfig } from "../config/index.ts";
import type { ThrottleRecord, ThrottleStore, ThrottleTransition } from "../db/store.ts";
import { tooManyRequests } from "../auth/throttle.ts";

export interface SignupThrottle {
  /**
   * Counts one sign-up attempt from the client at `address`. Throws 429 `too_many_requests` with
   * Retry-After while the client's window is full; nothing is counted then.
   */
  attempt(address: string): Promise<void>;
}

type Limits = Pick<SignupConfig, "clientMax" | "clientWindowMs">;

/** One of several windows a key is held to at once (a minute's and an hour's), named in the key it counts under. */
export interface NamedLimit extends Limits {
  name: string;
}

/**
 * A fixed window from the client's first attempt: a sign-up key's record keeps, as its lastFailureAt,
 * when its window began (not its latest attempt), so that a client signing up steadily below the rate is
 * never blocked. The result: 0 when counted, else how long (ms) until the window ends.
 */
export const countSignup =
  (key: string, at: number, { clientMax, clientWindowMs }: Limits) =>
  (stored: ThrottleRecord | null): ThrottleTransition<number> => {
    const began = stored ? Date.parse(stored.lastFailureAt) : NaN;
    const current = began + clientWindowMs > at ? stored : null;
    const endsAt = current ? began + clientWindowMs : at + clientWindowMs;
    if (current && current.failures >= clientMax) return { next: stored, result: endsAt - at };
    const failures = (current?.failures ?? 0) + 1;
    return {
      next: {
        key,
        failures,
        lastFailureAt: current?.lastFailureAt ?? new Date(at).toISOString(),
        blockedUntil: failures >= clientMax ? new Date(endsAt).toISOString() : null,
      },
      result: 0,
    };
  };

/**
 * Counts one request under `${prefix}:${limit.name}:${key}` against each limit in turn: the wait (ms) of the
 * first that is full (the later ones are not counted then), else 0.
 */
export async function windowsWait(
  store: ThrottleStore,
  prefix: string,
  key: string,
  limits: readonly NamedLimit[],
  now: () => number,
): Promise<number> {
  for (const limit of limits) {
    const name = `${prefix}:${limit.name}:${key}`;
    const waitMs = await store.transition(name, countSignup(name, now(), limit));
    if (waitMs > 0) return waitMs;
  }
  return 0;
}

export function createSignupThrottle(store: ThrottleStore, limits: Limits, now = () => Date.now()): SignupThrottle {
  return {
    async attempt(address) {
      const key = `signup:${address}`;
      const waitMs = await store.transition(key, countSignup(key, now(), limits));
      if (waitMs <= 0) return;
      throw tooManyRequests(waitMs, (seconds) => `Too many sign-ups from this address; try again in ${seconds} s.`);
    },
  };
}
