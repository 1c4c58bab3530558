// While subscriptions opened with a token are open, their tokens are checked again every few seconds:
// one revoked, or whose account was deleted or disabled, ends its subscriptions with UNAUTHENTICATED.
import { AppError } from "../errors/index.ts";
import type { Logger } from "../observability/log.ts";
import { type Subscription, tokenExpired } from "./subscription.ts";

export interface TokenRecheckOptions {
  /** The hub's open subscriptions (read, never changed here). */
  open: ReadonlySet<Subscription>;
  /** Whether the token still authenticates; "unknown" when it cannot be told now (the database is away). */
  recheckToken(authorization: string): Promise<boolean | "unknown">;
  recheckMs: number;
  metrics: { dropped(reason: "revoked"): void };
  logger: Logger;
  now: () => number;
}

/** The recurring check: started by the first subscription with a token, stopped when none is open. */
export function tokenRechecks({ open, recheckToken, recheckMs, metrics, logger, now }: TokenRecheckOptions) {
  let recheck: ReturnType<typeof setInterval> | null = null;
  let checking = false;

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
      if ((await recheckToken(authorization)) !== false) continue;
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

  return {
    start(): void {
      if (recheck) return;
      recheck = setInterval(() => {
        if (checking) return;
        checking = true;
        checkTokens()
          .catch((error: unknown) => logger.warn({ err: error }, "could not check the tokens of open subscriptions"))
          .finally(() => (checking = false));
      }, recheckMs);
      recheck.unref?.();
    },
    stop(): void {
      if (recheck) clearInterval(recheck);
      recheck = null;
    },
  };
}
