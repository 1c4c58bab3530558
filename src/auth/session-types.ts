// What sessions answer with and what they record of a client: the shapes the session service, its
// routes and the account service share.
import type { Origin } from "../audit/model.ts";
import type { SessionRecord, UserRecord } from "../db/store.ts";
import type { SessionMode } from "./cookie-session.ts";
import type { IssuedToken } from "./tokens.ts";

/** What login, refresh and a password change answer: an access token and the refresh token that renews it. */
export interface TokenPair extends IssuedToken {
  refresh_token: string;
  refresh_expires_in: number;
}

/**
 * The pair a session answers with: a new access token for `user` (carrying the session's amr) beside the
 * refresh token `refresh`, which expires at `refreshExpiresAt` (counted from `at`); `mode` is where the
 * refresh token goes.
 */
export type PairIssuer = (
  user: UserRecord,
  session: Pick<SessionRecord, "id" | "amr">,
  refresh: string,
  refreshExpiresAt: number,
  at: number,
  mode: SessionMode,
) => Promise<TokenPair>;

/** Where a request came from, as a session and the audit log record it. */
export interface ClientInfo extends Origin {
  address: string;
  userAgent: string | null;
}

export interface SessionView {
  id: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
  user_agent: string | null;
  client_address: string | null;
  /** How it signed in (RFC 8176's names). */
  amr: string[];
  /** When it last showed a second factor; null: never. */
  mfa_at: string | null;
  current: boolean;
}

/** What a rotation seals for replays: the pair, with absolute expiries (seconds since the epoch). */
export interface SealedPair {
  token: string;
  refresh_token: string;
  expires_at: number;
  refresh_expires_at: number;
}
