// Refreshing a session: the rotation of its refresh token, safe under concurrency (see sessions.ts), the
// same answer for a repeat within the reuse window, and the session's end for a copied token.
import { auditEvent } from "../audit/model.ts";
import type { SessionConfig } from "../config/index.ts";
import type { PresentedRefresh, SessionRecord, SessionStore, UserRecord } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import type { Logger } from "../observability/log.ts";
import type { SessionMode } from "./cookie-session.ts";
import { newRefreshToken, refreshDigest, seal, unseal, looksLikeRefreshToken } from "./refresh-tokens.ts";
import type { ClientInfo, PairIssuer, SealedPair, TokenPair } from "./session-types.ts";
import type { LoginThrottle } from "./throttle.ts";

export interface RefreshDeps {
  sessions: SessionStore;
  throttle: LoginThrottle;
  settings: SessionConfig;
  logger: Logger;
  now: () => number;
  /** A refresh token's expiry from `at`: its lifetime, never past the session's absolute limit. */
  refreshExpiry(session: Pick<SessionRecord, "createdAt">, at: number): number;
  pair: PairIssuer;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** refresh, and the checks logoutByRefresh shares with it. */
export function createRefresher({ sessions, throttle, settings, logger, now, refreshExpiry, pair }: RefreshDeps) {
  const invalid = () => new AppError("invalid_refresh_token", "The refresh token is unknown, expired or revoked.");
  /** Failed refresh tokens count against the client, whichever route they came to. */
  const clientKey = (client: ClientInfo) => `refresh:${client.address}`;
  /** The refusal, once counted against the client. */
  const refused = async (client: ClientInfo, error: AppError) => {
    await throttle.clientFailed(clientKey(client));
    return error;
  };
  /** A refresh token found, within its lifetime and its session's, of an active user. */
  const usable = (found: PresentedRefresh | null, at: number): found is PresentedRefresh => {
    const over = (when: string) => Date.parse(when) <= at;
    return !!found && !over(found.token.expiresAt) && !over(found.session.expiresAt) && found.user.status === "active";
  };

  return {
    invalid,
    clientKey,
    refused,
    usable,

    /**
     * A new pair for the refresh token, and its user; the same pair for a repeat within the reuse window.
     * `mode`: where the token came from, and so where its successor goes.
     */
    async refresh(
      presented: string,
      client: ClientInfo,
      mode: SessionMode = "json",
    ): Promise<TokenPair & { user: UserRecord }> {
      await throttle.checkClient(clientKey(client));
      if (!looksLikeRefreshToken(presented)) throw await refused(client, invalid());
      const digest = refreshDigest(presented);
      const at = now();
      let found = await sessions.findRefresh(digest);
      if (!usable(found, at)) throw await refused(client, invalid());
      const { session, user } = found;

      if (found.token.rotatedAt === null) {
        const successor = newRefreshToken();
        const expiresAt = refreshExpiry(session, at);
        const answer = await pair(user, session, successor, expiresAt, at, mode);
        const sealed = await seal(presented, {
          token: answer.token,
          refresh_token: successor,
          expires_at: Math.floor(at / 1000) + answer.expires_in,
          refresh_expires_at: Math.floor(expiresAt / 1000),
        } satisfies SealedPair);
        const rotation = {
          at: iso(at),
          successor: { digest: refreshDigest(successor), expiresAt: iso(expiresAt) },
          sealed,
        };
        if (await sessions.rotate(digest, rotation)) return { ...answer, user };
        // Another rotation of this token landed first: its answer is the one to give.
        found = await sessions.findRefresh(digest);
        if (!found?.token.rotatedAt) throw await refused(client, invalid());
      }

      const rotatedAt = Date.parse(found.token.rotatedAt!);
      // Strictly within: a window of 0 lets no repeat through, not even one in the same millisecond.
      if (at - rotatedAt < settings.reuseWindowMs && found.token.successor) {
        const kept = (await unseal(presented, found.token.successor)) as SealedPair | null;
        if (kept) {
          const seconds = Math.floor(at / 1000);
          return {
            token: kept.token,
            token_type: "Bearer",
            expires_in: Math.max(0, kept.expires_at - seconds),
            refresh_token: kept.refresh_token,
            refresh_expires_in: Math.max(0, kept.refresh_expires_at - seconds),
            user: found.user,
          };
        }
      }
      // Rotated away long enough ago that no honest client still holds it: the token was copied, and
      // whoever holds the session now may be the thief. Both lose it.
      await sessions.end(
        user.id,
        { only: session.id },
        auditEvent("refresh.reuse_detected", {
          actor: user.id,
          target: user.id,
          origin: client,
          failed: true,
          detail: { session_id: session.id },
        }),
      );
      logger.warn(
        { session_id: session.id, user_id: user.id, rotated_at: found.token.rotatedAt },
        "refresh token presented again after its rotation: session ended",
      );
      throw await refused(
        client,
        new AppError(
          "refresh_token_reused",
          "This refresh token was already used; the session is ended. Log in again.",
        ),
      );
    },
  };
}
