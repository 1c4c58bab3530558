// Passkey sign-in options from one client: at most 30 a minute, then 429 until the minute ends. They need no
// token and each keeps a challenge row, so a client asking in a loop would fill the table. Held as sign-ups
// are (src/signup/throttle.ts's fixed window over the login throttle's store, keys of their own), so every
// instance on one database counts the same requests.
import type { ThrottleStore } from "../../db/store.ts";
import { limitKey } from "../../lib/limit-key.ts";
import { countSignup } from "../../signup/throttle.ts";
import { tooManyRequests } from "../throttle.ts";

export interface ClientLimit {
  /** Counts one request from the client at `address`; throws 429 `too_many_requests` with Retry-After past the limit. */
  attempt(address: string): Promise<void>;
}

/** Sign-in options per client and window: far above a person's sign-ins, far below a loop's. */
export const SIGN_IN_OPTIONS_LIMIT = { clientMax: 30, clientWindowMs: 60_000 };

export function signInOptionsLimit(
  store: ThrottleStore,
  limits = SIGN_IN_OPTIONS_LIMIT,
  now = () => Date.now(),
): ClientLimit {
  return {
    async attempt(address) {
      const key = `passkey-options:${limitKey(address)}`;
      const waitMs = await store.transition(key, countSignup(key, now(), limits));
      if (waitMs <= 0) return;
      throw tooManyRequests(
        waitMs,
        (seconds) => `Too many passkey sign-in options asked for from this address; try again in ${seconds} s.`,
      );
    },
  };
}
