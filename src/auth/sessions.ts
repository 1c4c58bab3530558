// Sessions: what a login starts and a refresh renews, in domain terms. Knows nothing of HTTP.
//
// Rotation is safe under concurrency: the store lets exactly one rotation of a refresh token land,
// and that rotation seals its answer under the token, so every other presentation within the reuse
// window (a second tab, a retry after a lost response, another instance) opens the same answer. After
// the window, a rotated token presented again means it was copied: the session ends.
import { auditEvent, type Origin } from "../audit/model.ts";
import type { SessionConfig } from "../config/index.ts";
import {
  ReferenceGone,
  type RevocationStore,
  type SessionRecord,
  type SessionScope,
  type SessionStore,
  type UserRecord,
} from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { newId } from "../lib/ids.ts";
import type { LogoutScope } from "./model.ts";
import type { Logger } from "../observability/log.ts";
import { newRefreshToken, refreshDigest, looksLikeRefreshToken } from "./refresh-tokens.ts";
import type { LoginThrottle } from "./throttle.ts";
import type { SessionMode } from "./cookie-session.ts";
import type { TokenService, VerifiedToken } from "./tokens.ts";
import { createRefresher } from "./refresh.ts";
import type { ClientInfo, PairIssuer, SessionView, TokenPair } from "./session-types.ts";

export type { ClientInfo, SessionView, TokenPair } from "./session-types.ts";

export interface SessionServiceDeps {
  sessions: SessionStore;
  revocations: RevocationStore;
  tokens: TokenService;
  throttle: LoginThrottle;
  settings: SessionConfig;
  logger: Logger;
  now?: () => number;
}

/** How a session signed in: RFC 8176's names (["pwd"], ["pwd", "otp"], ["hwk"]), and when a second factor was shown. */
export interface SignedInWith {
  amr?: string[];
  mfaAt?: string;
}

/** The amr column's comma-separated names as the claim and the session list show them. */
export const amrNames = (stored: string): string[] => stored.split(",").filter((name) => name !== "");

/** Longer user agents are cut: the column describes, it does not archive. */
const USER_AGENT_MAX = 256;

export type SessionService = ReturnType<typeof createSessionService>;

/** A user ending their own sessions. */
const revoked = (user: UserRecord, origin: Origin, detail: Record<string, unknown>) =>
  auditEvent("session.revoked", { actor: user.id, target: user.id, origin, detail });

export function createSessionService({
  sessions,
  revocations,
  tokens,
  throttle,
  settings,
  logger,
  now = Date.now,
}: SessionServiceDeps) {
  const iso = (ms: number) => new Date(ms).toISOString();
  /** A refresh token's expiry from `at`: its lifetime, never past the session's absolute limit. */
  const refreshExpiry = (session: Pick<SessionRecord, "createdAt">, at: number) =>
    Math.min(at + settings.refreshTtlSeconds * 1000, Date.parse(session.createdAt) + settings.maxAgeSeconds * 1000);

  const pair: PairIssuer = async (user, session, refresh, refreshExpiresAt, at, mode) => {
    const access = await tokens.issue({
      userId: user.id,
      version: user.tokenVersion,
      sessionId: session.id,
      ...(mode === "cookie" && { mode }),
      amr: amrNames(session.amr),
    });
    return {
      ...access,
      refresh_token: refresh,
      refresh_expires_in: Math.floor((refreshExpiresAt - at) / 1000),
    };
  };

  const refresher = createRefresher({ sessions, throttle, settings, logger, now, refreshExpiry, pair });
  const { invalid, clientKey, refused, usable } = refresher;

  /** Ends the user's sessions that `scope` names, counted from `current` (the session asking). */
  async function endFrom(user: UserRecord, current: string, scope: LogoutScope, client: Origin): Promise<void> {
    const which: SessionScope = { local: { only: current }, others: { except: current }, global: "all" as const }[
      scope
    ];
    await sessions.end(user.id, which, revoked(user, client, { scope }));
  }

  /**
   * A new session for the user, ready to be stored (`session`, `refresh`), and the pair to answer
   * with once it is (`pair`). `factors`: how it signed in (a password alone unless told), and when a
   * second factor was shown.
   */
  function prepare(user: UserRecord, client: ClientInfo, mode: SessionMode, factors: SignedInWith = {}) {
    const at = now();
    const session: SessionRecord = {
      id: newId(),
      userId: user.id,
      createdAt: iso(at),
      lastUsedAt: iso(at),
      expiresAt: "",
      userAgent: client.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
      clientAddress: client.address,
      amr: (factors.amr ?? ["pwd"]).join(","),
      mfaAt: factors.mfaAt ?? null,
    };
    const expiresAt = refreshExpiry(session, at);
    session.expiresAt = iso(expiresAt);
    const token = newRefreshToken();
    return {
      session,
      refresh: { digest: refreshDigest(token), expiresAt: session.expiresAt },
      pair: (holder: UserRecord) => pair(holder, session, token, expiresAt, at, mode),
    };
  }

  return {
    prepare,

    /**
     * Starts a session for a user: with `login`, one whose password was just checked (the login is
     * recorded with it). null: the user was deleted or disabled meanwhile, or their tokens revoked.
     */
    async start(
      user: UserRecord,
      client: ClientInfo,
      { login = false, mode = "json", amr, mfaAt }: { login?: boolean; mode?: SessionMode } & SignedInWith = {},
    ): Promise<TokenPair | null> {
      const prepared = prepare(user, client, mode, { ...(amr && { amr }), ...(mfaAt && { mfaAt }) });
      const event = login
        ? auditEvent("login.succeeded", { actor: user.id, target: user.id, origin: client }, prepared.session.createdAt)
        : undefined;
      try {
        const started = await sessions.start(
          prepared.session,
          prepared.refresh,
          { tokenVersion: user.tokenVersion },
          event,
        );
        if (!started) return null;
      } catch (error) {
        if (error instanceof ReferenceGone) return null;
        throw error;
      }
      return prepared.pair(user);
    },

    refresh: refresher.refresh,

    /** The user's live sessions, newest first, marking the one `token` belongs to. */
    async list(user: UserRecord, token: VerifiedToken): Promise<SessionView[]> {
      const live = await sessions.list(user.id, iso(now()));
      return live.map((session) => ({
        id: session.id,
        created_at: session.createdAt,
        last_used_at: session.lastUsedAt,
        expires_at: session.expiresAt,
        user_agent: session.userAgent,
        client_address: session.clientAddress,
        amr: amrNames(session.amr),
        mfa_at: session.mfaAt,
        current: session.id === token.sessionId,
      }));
    },

    /** Ends one of the user's sessions. Throws `not_found` when the user has none with this id. */
    async end(user: UserRecord, id: string, client: Origin): Promise<void> {
      const event = revoked(user, client, { scope: "one", session_id: id });
      if ((await sessions.end(user.id, { only: id }, event)) === 0)
        throw new AppError("not_found", "You have no session with this id.");
    },

    /**
     * Logs out: `local` ends the token's session, `others` every other session of the user, `global`
     * all of them. A token from before sessions is revoked by its jti; all sessions are its "others".
     */
    async logout(user: UserRecord, token: VerifiedToken, scope: LogoutScope, client: Origin): Promise<void> {
      const current = token.sessionId;
      if (current === undefined) {
        if (scope !== "local") await sessions.end(user.id, "all", revoked(user, client, { scope }));
        if (scope !== "others") await revocations.revoke(token.jti, iso(token.exp * 1000));
        return;
      }
      await endFrom(user, current, scope, client);
    },

    /**
     * Logs out with a session's refresh token in place of its access token (which may have expired):
     * as logout, counted from the session the token belongs to. Throws invalid_refresh_token, counted
     * against the client as a failed refresh is, unless it is the current token of a live session; 429
     * while the client is blocked.
     */
    async logoutByRefresh(presented: string, scope: LogoutScope, client: ClientInfo): Promise<void> {
      await throttle.checkClient(clientKey(client));
      const found = looksLikeRefreshToken(presented) ? await sessions.findRefresh(refreshDigest(presented)) : null;
      // A spent (rotated) token no longer speaks for its session: only refresh may answer it, in its window.
      if (!usable(found, now()) || found.token.rotatedAt !== null) throw await refused(client, invalid());
      await endFrom(found.user, found.session.id, scope, client);
    },

    /**
     * A fresh refresh token for the session a password change keeps, with its digest and expiry for
     * the store; `finish` makes the pair once the change has landed.
     */
    async renewal(user: UserRecord, sessionId: string, mode: SessionMode) {
      const at = now();
      const session = (await sessions.list(user.id, iso(at))).find((s) => s.id === sessionId);
      if (!session) return null;
      const refresh = newRefreshToken();
      const expiresAt = refreshExpiry(session, at);
      return {
        keep: { sessionId, refresh: { digest: refreshDigest(refresh), expiresAt: iso(expiresAt) } },
        finish: (changed: UserRecord) => pair(changed, session, refresh, expiresAt, at, mode),
      };
    },
  };
}
