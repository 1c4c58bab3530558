// Issues and verifies svc's access tokens: HS256 JWTs through @elysiajs/jwt, algorithm pinned.
import type { Awaitable } from "../awaitable.ts";
import { jwt } from "@elysiajs/jwt";
import { setBounded } from "../bounded-map.ts";

export const TOKEN_ISSUER = "svc";

export interface IssuedToken {
  token: string;
  token_type: "Bearer";
  expires_in: number;
}

export interface TokenSubject {
  userId: string;
  /** The user's token version when the token was issued. */
  version: number;
  /** The session it belongs to (the `sid` claim); tokens issued before sessions have none. */
  sessionId?: string;
  /** "cookie": the session's refresh token lives in a cookie (the `mode` claim), so a new pair sets it there. */
  mode?: "cookie";
}

/** A verified token: whose it is, and what identifies and ends it. */
export interface VerifiedToken extends TokenSubject {
  jti: string;
  /** When it expires, in seconds since the epoch. */
  exp: number;
}

export interface TokenService {
  issue(subject: TokenSubject): Promise<IssuedToken>;
  /** null: not a token svc issued, or expired, or not yet valid. Never throws. At once for a token verified before. */
  verify(token: string): Awaitable<VerifiedToken | null>;
  /** Whether `token` is one verified before and still remembered (expired or not): a well-formed token. */
  remembers(token: string): boolean;
}

/** How many verified tokens are remembered; the oldest go first. */
const VERIFIED_CACHE_SIZE = 10_000;

export function createTokenService(secret: Uint8Array, ttlSeconds: number): TokenService {
  const signer = jwt({ name: "jwt", secret, alg: "HS256", iss: TOKEN_ISSUER }).decorator.jwt;
  // @elysiajs/jwt verifies with whatever the header says unless told otherwise, and does not require exp.
  const rules = { algorithms: ["HS256"], issuer: TOKEN_ISSUER, requiredClaims: ["exp", "iat", "sub", "jti"] };
  const verified = new Map<string, VerifiedToken>();

  return {
    async issue({ userId, version, sessionId, mode }) {
      // Relative: jose computes exp microseconds before the iat the plugin stamps, in the same synchronous
      // step, instead of from a clock read before an await (which let exp - iat come out one second short).
      const claims = { sub: userId, ver: version, ...(sessionId && { sid: sessionId }), ...(mode && { mode }) };
      const token = await signer.sign({ ...claims, jti: crypto.randomUUID(), exp: `${ttlSeconds}s` });
      return { token, token_type: "Bearer", expires_in: ttlSeconds };
    },
    remembers: (token) => verified.has(token),
    verify(token) {
      // A token's signature and claims never change, so a verified token is remembered until it
      // expires; revocation (version, jti) is checked by the authenticator on every request anyway.
      const known = verified.get(token);
      if (known) {
        if (known.exp > Date.now() / 1000) return known;
        verified.delete(token);
        return null;
      }
      return verifyOnce(token).then((result) => {
        if (result) setBounded(verified, token, result, VERIFIED_CACHE_SIZE);
        return result;
      });
    },
  };

  async function verifyOnce(token: string): Promise<VerifiedToken | null> {
    // jose also refuses a future nbf and an iat it cannot read.
    const claims = await signer.verify(token, rules);
    if (!claims || typeof claims.sub !== "string" || typeof claims.jti !== "string" || typeof claims.exp !== "number")
      return null;
    const version = claims.ver;
    if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) return null;
    const { sid, mode } = claims;
    if (sid !== undefined && typeof sid !== "string") return null;
    if (mode !== undefined && mode !== "cookie") return null;
    return {
      userId: claims.sub,
      version,
      jti: claims.jti,
      exp: claims.exp,
      ...(sid !== undefined && { sessionId: sid }),
      ...(mode === "cookie" && { mode }),
    };
  }
}
