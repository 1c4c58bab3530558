// svc's access tokens: HS256 JWTs, algorithm pinned, with one set of rules for every place that reads them.
//
// Two libraries, one format. Routes verify a token they have not seen through @elysiajs/jwt used as a plugin
// (`accessTokenPlugin`, mounted by auth/bearer.ts): its `accessToken.verify` in the request's context. Signing
// happens inside the session service, which the CLI shares and which seals a pair before its transaction
// commits, and verifying also happens where no Elysia context exists (GraphQL over WebSocket, a subscription's
// token rechecks): there svc calls jose, the library the plugin wraps, directly, with the key imported once.
// Both are given RULES, because the plugin verifies with whatever algorithm the token's header names unless
// told otherwise, and does not require an exp (README, "The card's packages").
import { jwt } from "@elysiajs/jwt";
import { CompactSign, type JWTPayload, type JWTVerifyOptions, jwtVerify } from "jose";
import type { Awaitable } from "../lib/awaitable.ts";
import { setBounded } from "../lib/bounded-map.ts";

export const TOKEN_ISSUER = "svc";
const ALGORITHM = "HS256";

/** What a token must be to be svc's: checked by jose, whether called by the plugin or by svc. */
export const RULES = {
  algorithms: [ALGORITHM],
  issuer: TOKEN_ISSUER,
  requiredClaims: ["exp", "iat", "sub", "jti"],
} as const satisfies JWTVerifyOptions;

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
  /** How the session signed in (the `amr` claim, RFC 8176's names): ["pwd"], ["pwd", "otp"], ["hwk"]... */
  amr?: string[];
}

/** A verified token: whose it is, and what identifies and ends it. */
export interface VerifiedToken extends TokenSubject {
  jti: string;
  /** When it expires, in seconds since the epoch. */
  exp: number;
}

/** What checks a token's signature and claims: the plugin's `accessToken` in a request, jose elsewhere. */
export interface TokenVerifier {
  /** The token's claims, or false (@elysiajs/jwt's answer) when it is not valid under `rules`. */
  verify(token: string, rules: JWTVerifyOptions): Promise<JWTPayload | false>;
}

export interface TokenService {
  issue(subject: TokenSubject): Promise<IssuedToken>;
  /**
   * null: not a token svc issued, or expired, or not yet valid. Never throws. At once for a token verified
   * before; otherwise checked by `verifier` (jose directly when none is given).
   */
  verify(token: string, verifier?: TokenVerifier): Awaitable<VerifiedToken | null>;
  /** Whether `token` is one verified before and still remembered (expired or not): a well-formed token. */
  remembers(token: string): boolean;
  /** @elysiajs/jwt for routes: decorates their context with `accessToken` (sign and verify under this key). */
  plugin: ReturnType<typeof accessTokenPlugin>;
}

const UTF8 = new TextEncoder();

/** How many verified tokens are remembered; the oldest go first. */
const VERIFIED_CACHE_SIZE = 10_000;

/** The plugin as routes mount it: one seed, so Elysia mounts it once however many route groups use it. */
export function accessTokenPlugin(secret: Uint8Array) {
  return jwt({ name: "accessToken", secret, alg: ALGORITHM, iss: TOKEN_ISSUER });
}

export function createTokenService(secret: Uint8Array, ttlSeconds: number): TokenService {
  const verified = new Map<string, VerifiedToken>();
  // Given raw bytes, jose imports them into a CryptoKey on every call; imported once, the key serves every
  // token (a sixth of a refresh's CPU on PostgreSQL went to signing: bench/results.md, "#59: refresh").
  let key: Promise<CryptoKey> | undefined;
  const hmacKey = () =>
    (key ??= crypto.subtle
      .importKey("raw", new Uint8Array(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"])
      .catch((error: unknown) => {
        // Not kept: the next token tries the import again.
        key = undefined;
        throw error;
      }));
  const direct: TokenVerifier = {
    verify: (token, rules) =>
      hmacKey()
        .then((hmac) => jwtVerify(token, hmac, rules))
        .then(
          (result) => result.payload,
          () => false as const,
        ),
  };

  return {
    plugin: accessTokenPlugin(secret),
    async issue({ userId, version, sessionId, mode, amr }) {
      const claims = {
        sub: userId,
        ver: version,
        ...(sessionId && { sid: sessionId }),
        ...(mode && { mode }),
        ...(amr && { amr }),
      };
      const signing = hmacKey();
      // iat and exp from one clock read: exp - iat is the lifetime to the second.
      const iat = Math.floor(Date.now() / 1000);
      const payload = { ...claims, iss: TOKEN_ISSUER, jti: crypto.randomUUID(), iat, exp: iat + ttlSeconds };
      // jose's JWS signer on the claims as svc writes them: the same token SignJWT makes (its claims in this
      // order), without its structured clone of them, which cost as much as the signature (bench/results.md,
      // "#59: signing").
      const token = await new CompactSign(UTF8.encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
        .sign(await signing);
      return { token, token_type: "Bearer", expires_in: ttlSeconds };
    },
    remembers: (token) => verified.has(token),
    verify(token, verifier = direct) {
      // A token's signature and claims never change, so a verified token is remembered until it
      // expires; revocation (version, jti) is checked by the authenticator on every request anyway.
      const known = verified.get(token);
      if (known) {
        if (known.exp > Date.now() / 1000) return known;
        verified.delete(token);
        return null;
      }
      // jose also refuses a future nbf and an iat it cannot read.
      return verifier.verify(token, RULES).then((claims) => {
        const result = claims ? accessClaims(claims) : null;
        if (result) setBounded(verified, token, result, VERIFIED_CACHE_SIZE);
        return result;
      });
    },
  };
}

/** The subject a verified payload names, or null when a claim svc reads is missing or of the wrong kind. */
function accessClaims(claims: JWTPayload): VerifiedToken | null {
  if (typeof claims.sub !== "string" || typeof claims.jti !== "string" || typeof claims.exp !== "number") return null;
  const version = claims.ver;
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) return null;
  const { sid, mode, amr } = claims;
  if (sid !== undefined && typeof sid !== "string") return null;
  if (mode !== undefined && mode !== "cookie") return null;
  if (amr !== undefined && !(Array.isArray(amr) && amr.every((name) => typeof name === "string"))) return null;
  return {
    userId: claims.sub,
    version,
    jti: claims.jti,
    exp: claims.exp,
    ...(sid !== undefined && { sessionId: sid }),
    ...(mode === "cookie" && { mode }),
    ...(amr !== undefined && { amr: amr as string[] }),
  };
}
