// Turns the environment into one typed, frozen Config, or one ConfigError naming the variable.
// Nothing below main.ts reads the environment: everything receives this object.

import { type BackupConfig, backup } from "./backup.ts";
import {
  type JwtConfig,
  jwtSecret,
  type LoginThrottleConfig,
  type PasswordCost,
  passwordCost,
  type SessionConfig,
  sessions,
} from "./credentials.ts";
import { type DatabaseConfig, database } from "./database.ts";
import { type ListenAddress, operations, origins, type TlsFiles, trustProxy } from "./operations.ts";
import { type MailConfig, mail } from "./mail.ts";
import { type OidcConfig, oidc } from "./oidc.ts";
import { type SignupConfig, signup } from "./signup.ts";
import { boolean, ConfigError, deepFreeze, duration, type Env, integer, nonEmpty, oneOf } from "./values.ts";

export type Environment = "development" | "test" | "production";
export type GraphqlAuth = "required" | "mutations" | "off";
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

// Every importer reads its part of the configuration from here.
export * from "./backup.ts";
export * from "./credentials.ts";
export * from "./database.ts";
export * from "./mail.ts";
export * from "./oidc.ts";
export * from "./operations.ts";
export * from "./signup.ts";
export { ConfigError, type Env, parseDuration } from "./values.ts";

export interface Config {
  env: Environment;
  host: string;
  port: number;
  /** Let another process listen on the same port (SO_REUSEPORT); false: a taken port stops start-up. */
  reusePort: boolean;
  database: DatabaseConfig;
  jwt: JwtConfig;
  sessions: SessionConfig;
  graphql: {
    auth: GraphqlAuth;
    playground: boolean;
    introspection: boolean;
  };
  logLevel: LogLevel;
  maxBodyBytes: number;
  shutdownGraceMs: number;
  /** How long svc must go without a request before it throws away its compiled code (idle-memory.ts). */
  releaseCodeAfterMs: number;
  passwordCost: PasswordCost;
  /** How many proxies in front of svc append to X-Forwarded-For; 0: the header is ignored. */
  trustProxy: number;
  /** Origins allowed to call svc from a browser; empty: CORS stays closed. */
  corsOrigins: string[];
  /** Serve Prometheus metrics at /svc/metrics. */
  metrics: boolean;
  /** Write an access line for a health probe answered 200; false: only failed probes are logged. */
  logProbes: boolean;
  loginThrottle: LoginThrottleConfig;
  /** How long a password reset code an administrator issues stays redeemable. */
  resetCodeTtlSeconds: number;
  /** Audit events older than this are deleted. */
  auditRetentionSeconds: number;
  /** Serve the admin console at /svc/admin. */
  adminConsole: boolean;
  /** How long the answer to a request under an Idempotency-Key is kept for its repeats. */
  idempotencyTtlSeconds: number;
  /** Live Idempotency-Keys one caller (a user, or a client address) may hold at once. */
  idempotencyKeysPerCaller: number;
  subscriptions: SubscriptionsConfig;
  signup: SignupConfig;
  /** SVC_TLS_CERT and SVC_TLS_KEY: svc serves HTTPS with these files; null: plain HTTP. */
  tls: TlsFiles | null;
  /** SVC_OPS_ADDRESS: the second, plain-HTTP listener for operations; null: none. */
  opsAddress: ListenAddress | null;
  /** SVC_METRICS_TOKEN: the Bearer token /svc/metrics requires; null: none (see src/http/exposure.ts). */
  metricsToken: string | null;
  backup: BackupConfig;
  /** Mail: its transport, sender, links' address and e-mail verification (docs/mail.md). */
  mail: MailConfig;
  /** Sign-in through OpenID providers (docs/oidc.md); the redirect URIs are built from mail.publicUrl. */
  oidc: OidcConfig;
  /** Second factors (docs/second-factors.md). */
  mfa: MfaConfig;
}

export interface MfaConfig {
  /** SVC_ADMIN_MFA: with "required", an administrator without a second factor may only enrol one. */
  admin: "optional" | "required";
}

export interface SubscriptionsConfig {
  /** Open subscriptions one user (or one client address without a token) may hold. */
  perUser: number;
  /** Open subscriptions on this instance. */
  max: number;
  /** Events one subscriber may have waiting; a reader further behind is dropped. Not a variable: tests shorten it. */
  buffer: number;
  /** How often open subscriptions' tokens are checked again. Not a variable: tests shorten it. */
  recheckMs: number;
  /** SVC_EVENTS_KEEP: category events kept for subscriptions to resume from, at most. */
  eventsKept: number;
  /** SVC_EVENTS_KEEP_FOR: and for how long. */
  eventsKeptForSeconds: number;
}

export function parseConfig(env: Env): Config {
  const environment = oneOf(env, "SVC_ENV", ["development", "test", "production"], "development");
  const production = environment === "production";
  const portVar = env.SVC_PORT !== undefined ? "SVC_PORT" : "PORT";

  const jwt = jwtSecret(env, production);
  return deepFreeze({
    env: environment,
    host: nonEmpty(env, "SVC_HOST", "0.0.0.0"),
    port: integer(env, portVar, 8080, 0, 65535),
    reusePort: boolean(env, "SVC_REUSE_PORT", false),
    database: database(env),
    backup: backup(env),
    jwt,
    sessions: sessions(env, jwt.ttlSeconds),
    graphql: {
      auth: oneOf(env, "SVC_GRAPHQL_AUTH", ["required", "mutations", "off"], "required"),
      playground: boolean(env, "SVC_GRAPHQL_PLAYGROUND", !production),
      introspection: boolean(env, "SVC_GRAPHQL_INTROSPECTION", !production),
    },
    logLevel: oneOf(env, "SVC_LOG_LEVEL", ["debug", "info", "warn", "error", "silent"], "info"),
    maxBodyBytes: integer(env, "SVC_MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    shutdownGraceMs: duration(env, "SVC_SHUTDOWN_GRACE", "10s", 0, 300) * 1000,
    releaseCodeAfterMs: duration(env, "SVC_RELEASE_CODE_AFTER", "0s", 0, 86400) * 1000,
    passwordCost: passwordCost(env, environment),
    trustProxy: trustProxy(env),
    corsOrigins: origins(env),
    metrics: boolean(env, "SVC_METRICS", true),
    logProbes: boolean(env, "SVC_LOG_PROBES", true),
    loginThrottle: {
      maxFailures: integer(env, "SVC_LOGIN_MAX_FAILURES", 5, 1, 1000),
      backoffBaseMs: duration(env, "SVC_LOGIN_BACKOFF_BASE", "1s", 1, 3600) * 1000,
      backoffMaxMs: duration(env, "SVC_LOGIN_BACKOFF_MAX", "15m", 1, 86400) * 1000,
      clientMaxFailures: integer(env, "SVC_LOGIN_CLIENT_MAX_FAILURES", 100, 1, 1_000_000),
      clientWindowMs: duration(env, "SVC_LOGIN_CLIENT_WINDOW", "15m", 1, 86400) * 1000,
    },
    resetCodeTtlSeconds: duration(env, "SVC_RESET_CODE_TTL", "1h", 60, 7 * 86400),
    auditRetentionSeconds: duration(env, "SVC_AUDIT_RETENTION", "90d", 3600, 3650 * 86400),
    adminConsole: boolean(env, "SVC_ADMIN_CONSOLE", true),
    idempotencyTtlSeconds: duration(env, "SVC_IDEMPOTENCY_TTL", "24h", 60, 7 * 86400),
    idempotencyKeysPerCaller: integer(env, "SVC_IDEMPOTENCY_KEYS_PER_CALLER", 1000, 1, 100_000),
    subscriptions: {
      perUser: integer(env, "SVC_SUBSCRIPTIONS_PER_USER", 10, 1, 10_000),
      max: integer(env, "SVC_SUBSCRIPTIONS_MAX", 10_000, 1, 1_000_000),
      buffer: 1024,
      recheckMs: 2000,
      eventsKept: integer(env, "SVC_EVENTS_KEEP", 10_000, 1, 10_000_000),
      eventsKeptForSeconds: duration(env, "SVC_EVENTS_KEEP_FOR", "24h", 60, 365 * 86400),
    },
    signup: signup(env, environment === "development"),
    mail: mail(env, production, integer(env, portVar, 8080, 0, 65535)),
    oidc: oidcWithPublicUrl(env),
    mfa: { admin: oneOf(env, "SVC_ADMIN_MFA", ["optional", "required"], "optional") },
    ...operations(env, portVar),
  });
}

/** The providers need SVC_PUBLIC_URL: the redirect URI registered at each is built from it, never guessed. */
function oidcWithPublicUrl(env: Env): OidcConfig {
  const parsed = oidc(env);
  if (parsed.providers.length > 0 && (env.SVC_PUBLIC_URL ?? "") === "")
    throw new ConfigError(
      "SVC_PUBLIC_URL",
      "is required with SVC_OIDC_PROVIDERS: the address users reach svc at, from which the redirect URI registered at each provider is built",
      "",
    );
  return parsed;
}
