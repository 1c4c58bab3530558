// The one bearer check REST and GraphQL share: header → token → live user at the token's version.
import type { Store, UserRecord } from "../db/store.ts";
import { type Awaitable, chain } from "../lib/awaitable.ts";
import { AppError } from "../errors/index.ts";
import type { TokenService, TokenVerifier, VerifiedToken } from "./tokens.ts";

export interface Caller {
  user: UserRecord;
  token: VerifiedToken;
}

export interface Authenticator {
  /**
   * The calling user and their token: at once when the token and its holder are known from memory. Throws
   * (or rejects with) AppError `unauthorized`, with WWW-Authenticate, when there is none.
   */
  authenticate(authorization: string | null, verifier?: TokenVerifier): Awaitable<Caller>;
  /**
   * The token (its user and session), its signature and expiry checked but not whether it was revoked
   * since: for a repeat under an Idempotency-Key of the request that revoked it. null: no such token.
   */
  subject(authorization: string | null, verifier?: TokenVerifier): Promise<VerifiedToken | null>;
  /** @elysiajs/jwt, for routes to mount: their context's `accessToken` is the verifier to pass. */
  plugin: TokenService["plugin"];
}

const CHALLENGE = 'Bearer realm="svc"';

export function unauthorized(tokenSent: boolean, detail: string): AppError {
  const challenge = tokenSent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE;
  return new AppError("unauthorized", detail, { headers: { "www-authenticate": challenge } });
}

export function createAuthenticator(
  tokens: TokenService,
  store: Pick<Store, "tokenHolder">,
  now: () => number = Date.now,
): Authenticator {
  return {
    plugin: tokens.plugin,
    authenticate(authorization, verifier) {
      if (!authorization) throw unauthorized(false, "A Bearer token is required.");
      const token = bearerToken(authorization, tokens);
      if (token === null) throw unauthorized(true, "The Authorization header must read 'Bearer <token>'.");
      return chain(tokens.verify(token, verifier), (verified) => {
        if (!verified) throw invalid();
        return chain(store.tokenHolder(verified.userId, verified.jti, verified.sessionId), (holder) => {
          // A deleted user, a token from before a password change, or one whose session ended (logout,
          // refresh token reuse, or its expires_at passed though the background pruning has not yet
          // deleted it) is as invalid as a forged one.
          // Disabling bumps the token version too; the status is checked as well so that no path forgets it.
          if (
            !holder ||
            holder.revoked ||
            (holder.expiresAt !== null && Date.parse(holder.expiresAt) <= now()) ||
            holder.user.tokenVersion !== verified.version ||
            holder.user.status !== "active"
          ) {
            throw invalid();
          }
          return { user: holder.user, token: verified };
        });
      });
    },
    async subject(authorization, verifier) {
      const token = authorization && bearerToken(authorization, tokens);
      return token ? await tokens.verify(token, verifier) : null;
    },
  };
}

const invalid = () => unauthorized(true, "The token is invalid, expired or revoked.");

function bearerToken(authorization: string, tokens: Pick<TokenService, "remembers">): string | null {
  // The header as clients write it, with a token verified before and so well-formed then: not read
  // through the pattern again on every authenticated read (bench/results.md, "Figures behind the code").
  if (authorization.startsWith("Bearer ")) {
    const token = authorization.slice(7);
    if (tokens.remembers(token)) return token;
  }
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(authorization);
  return match ? match[1]! : null;
}
