// Failed-login throttling, kept in the database so every instance counts the same failures.
// Per account: after maxFailures consecutive failures, blocks that double with each further failure,
// capped at backoffMax, so no block lasts forever. Per client: a coarser cap on failures in a window.
import type { LoginThrottleConfig } from "../config.ts";
import type { ThrottleStore } from "../db/store.ts";
import { AppError } from "../errors.ts";

export interface LoginThrottle {
  /** Throws 429 `too_many_requests` with Retry-After while the account or the client is blocked. */
  check(accountKey: string, clientKey: string): Promise<void>;
  failed(accountKey: string, clientKey: string): Promise<void>;
  succeeded(accountKey: string): Promise<void>;
}

export function createLoginThrottle(store: ThrottleStore, settings: LoginThrottleConfig, now = () => Date.now()): LoginThrottle {
  async function blockedFor(key: string): Promise<number> {
    const state = await store.get(key);
    return state?.blockedUntil ? Date.parse(state.blockedUntil) - now() : 0;
  }

  return {
    async check(accountKey, clientKey) {
      const wait = Math.max(await blockedFor(accountKey), await blockedFor(clientKey));
      if (wait > 0) {
        const seconds = Math.ceil(wait / 1000);
        throw new AppError("too_many_requests", `Too many failed logins; try again in ${seconds} s.`, {
          headers: { "retry-after": String(seconds) },
        });
      }
    },

    async failed(accountKey, clientKey) {
      const at = now();
      const account = await store.recordFailure(accountKey, new Date(at).toISOString());
      if (account.failures >= settings.maxFailures) {
        const doublings = Math.min(account.failures - settings.maxFailures, 30);
        const delay = Math.min(settings.backoffBaseMs * 2 ** doublings, settings.backoffMaxMs);
        await store.block(accountKey, new Date(at + delay).toISOString());
      }

      // A client's count starts afresh once its last failure is older than the window.
      const previous = await store.get(clientKey);
      if (previous && Date.parse(previous.lastFailureAt) < at - settings.clientWindowMs) await store.clear(clientKey);
      const client = await store.recordFailure(clientKey, new Date(at).toISOString());
      if (client.failures >= settings.clientMaxFailures) {
        await store.block(clientKey, new Date(at + settings.clientWindowMs).toISOString());
      }
    },

    succeeded: (accountKey) => store.clear(accountKey),
  };
}
