// Credentials: the password hashing cost, the secret that signs access tokens, how long sessions last.

import { ConfigError, duration, type Env, oneOf } from "./values.ts";

export interface PasswordCost {
  /** argon2id memory in KiB. */
  memoryCost: number;
  /** argon2id iterations. */
  timeCost: number;
}

export interface LoginThrottleConfig {
  /** Consecutive failures on one account before it is blocked. */
  maxFailures: number;
  /** First block; each further failure doubles it, up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Failures from one client within clientWindowMs before the client is blocked for the window. */
  clientMaxFailures: number;
  clientWindowMs: number;
}

export interface SessionConfig {
  /** A refresh token's lifetime; each refresh issues one that lasts this long again (sliding). */
  refreshTtlSeconds: number;
  /** No session lasts longer than this from its login, however often it is refreshed. */
  maxAgeSeconds: number;
  /** A rotated refresh token presented again this soon gets the same successor; later, it ends the session. */
  reuseWindowMs: number;
}

export interface JwtConfig {
  secret: Uint8Array;
  /** True when no secret was configured and one was drawn at random for this process. */
  ephemeral: boolean;
  ttlSeconds: number;
}

/** OWASP's first argon2id recommendation: 19 MiB, 2 iterations, 1 lane. */
export const PRODUCTION_PASSWORD_COST: PasswordCost = Object.freeze({ memoryCost: 19456, timeCost: 2 });
/** argon2id at its cheapest, for tests that start svc as a process: they exercise the path, not the cost. */
export const MINIMAL_PASSWORD_COST: PasswordCost = Object.freeze({ memoryCost: 64, timeCost: 1 });

const MIN_SECRET_BYTES = 32;
/** 32 spaces or one repeated character pass a length check and are guessed at once. */
const MIN_SECRET_DISTINCT_BYTES = 16;
const MAKE_A_SECRET = "make one with: openssl rand -base64 48";

/** SVC_PASSWORD_COST=minimal is for test processes only: anywhere else it would weaken every stored hash. */
export function passwordCost(env: Env, environment: "development" | "test" | "production"): PasswordCost {
  const accepts = ["production", "minimal"] as const;
  const cost = oneOf(env, "SVC_PASSWORD_COST", accepts, "production");
  if (cost === "minimal" && environment !== "test")
    throw new ConfigError("SVC_PASSWORD_COST", "minimal only with SVC_ENV=test; otherwise production", cost);
  return cost === "minimal" ? MINIMAL_PASSWORD_COST : PRODUCTION_PASSWORD_COST;
}

/** The access tokens' signing secret and lifetime; a random secret outside production when none is set. */
export function jwtSecret(env: Env, production: boolean): JwtConfig {
  const ttlSeconds = duration(env, "SVC_JWT_TTL", "15m", 1, 30 * 86400);
  const raw = env.SVC_JWT_SECRET;
  if (raw === undefined || raw === "") {
    if (production) {
      throw new ConfigError(
        "SVC_JWT_SECRET",
        `required in production: at least ${MIN_SECRET_BYTES} bytes; ${MAKE_A_SECRET}`,
        "",
      );
    }
    return { secret: crypto.getRandomValues(new Uint8Array(MIN_SECRET_BYTES)), ephemeral: true, ttlSeconds };
  }
  const secret = new TextEncoder().encode(raw);
  if (secret.byteLength < MIN_SECRET_BYTES) {
    throw new ConfigError(
      "SVC_JWT_SECRET",
      `at least ${MIN_SECRET_BYTES} bytes; ${MAKE_A_SECRET}`,
      `${secret.byteLength} bytes`,
    );
  }
  const distinct = distinctBytes(secret);
  if (distinct < MIN_SECRET_DISTINCT_BYTES) {
    throw new ConfigError(
      "SVC_JWT_SECRET",
      `at least ${MIN_SECRET_DISTINCT_BYTES} distinct byte values; ${MAKE_A_SECRET}`,
      `${distinct} distinct bytes`,
    );
  }
  return { secret, ephemeral: false, ttlSeconds };
}

export function sessions(env: Env, accessTtl: number): SessionConfig {
  const refreshTtlSeconds = duration(env, "SVC_REFRESH_TTL", "30d", 60, 3650 * 86400);
  const maxAgeSeconds = duration(env, "SVC_SESSION_MAX_AGE", "90d", 60, 3650 * 86400);
  // An access token must not outlive the refresh token it came with, or a session ended by expiry
  // would still be good for requests.
  if (refreshTtlSeconds < accessTtl) {
    throw new ConfigError(
      "SVC_REFRESH_TTL",
      `a duration no shorter than SVC_JWT_TTL (${accessTtl}s)`,
      env.SVC_REFRESH_TTL!,
    );
  }
  return {
    refreshTtlSeconds,
    maxAgeSeconds,
    reuseWindowMs: duration(env, "SVC_REFRESH_REUSE_WINDOW", "10s", 0, 300) * 1000,
  };
}

// Indexed, as deepFreeze below loops: a Set built from the bytes iterated them through the iterator
// protocol, whose functions the JIT then compiled before svc listened.
function distinctBytes(bytes: Uint8Array): number {
  const seen = new Uint8Array(256);
  let count = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (seen[bytes[i]!] === 0) {
      seen[bytes[i]!] = 1;
      count++;
    }
  }
  return count;
}
