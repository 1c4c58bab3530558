// Whose an Idempotency-Key is, and what a request under one gives and gets: the shapes the routes'
// `operation` (operations.ts) and the key's keeper (idempotency.ts) share.
import type { AnswerSet } from "./etag.ts";

/** A request under an Idempotency-Key, before its work runs. */
export interface KeyedRequest {
  request: Request;
  /** "user:<id>", or "client:<address>" for routes without a caller. */
  caller: string;
  /** The request's body as parsed (null for none): the same key with another body is refused. */
  body: unknown;
  /** The caller's session (sessionOf its token), for requests made with one. */
  session?: string;
  /**
   * The key is the session's own, not the caller's: for answers that carry tokens (a password change)
   * or act on the session itself (logout).
   */
  perSession?: boolean;
}

/** Whose a key is: the caller, and the session for keys or answers that are the session's own. */
export type KeyHolder = Pick<KeyedRequest, "caller" | "session" | "perSession">;

/** A key claimed by one request, until its work ends. */
export interface Claim {
  /**
   * Keeps `result` as the key's answer, with `set`'s status and headers; a refusal (a status from 400)
   * frees the key instead. Only the first of keep and release acts.
   */
  keep(result: unknown, set: AnswerSet): Promise<void>;
  /** Frees the key: the work failed and changed nothing, so its retry runs again. */
  release(): Promise<void>;
}

type TokenSession = { sessionId?: string; jti: string };

/** A token's session: its `sid`, or the token itself for one from before sessions. */
export function sessionOf(token: TokenSession): string {
  return token.sessionId ?? `token:${token.jti}`;
}

/** Whose a bearer request's key is: its user's, noting the session that asked (see replayFor). */
export function byUser(user: { id: string }, token: TokenSession): KeyHolder {
  return { caller: `user:${user.id}`, session: sessionOf(token) };
}

/** As byUser, the key being the session's own: for answers that carry tokens, or that act on the session itself. */
export function bySession(user: { id: string }, token: TokenSession): KeyHolder {
  return { ...byUser(user, token), perSession: true };
}
