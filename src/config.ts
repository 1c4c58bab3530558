// Turns the environment into one typed, frozen Config, or one ConfigError naming the variable.
// Nothing below main.ts reads the environment: everything receives this object.

export type Environment = "development" | "test" | "production";
export type GraphqlAuth = "required" | "mutations" | "off";
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface PostgresConfig {
  kind: "postgres";
  url: string;
  poolMax: number;
  connectTimeoutS: number;
  statementTimeoutMs: number;
  /** How late an instance may learn of another's change to a token or a table; 0: every request asks the database. */
  stalenessMs: number;
}

export type DatabaseConfig = { kind: "sqlite"; path: string } | PostgresConfig;

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

export interface Config {
  env: Environment;
  host: string;
  port: number;
  /** Let another process listen on the same port (SO_REUSEPORT); false: a taken port stops start-up. */
  reusePort: boolean;
  database: DatabaseConfig;
  jwt: {
    secret: Uint8Array;
    /** True when no secret was configured and one was drawn at random for this process. */
    ephemeral: boolean;
    ttlSeconds: number;
  };
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
}

export interface TlsFiles {
  /** The certificate, or the chain (the certificate first), PEM. */
  certPath: string;
  /** Its private key, PEM, unencrypted. */
  keyPath: string;
}

export interface ListenAddress {
  host: string;
  port: number;
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

// Sign-up control (SVC_SIGNUP, SVC_INVITATION_TTL, SVC_SIGNUP_CLIENT_MAX, SVC_SIGNUP_CLIENT_WINDOW): who
// may create their own account at users/create, and how often one client may try.

/** open: anyone signs up. invite: only with an invitation code. closed: only administrators create accounts. */
export type SignupMode = "open" | "invite" | "closed";
export const SIGNUP_MODES = ["open", "invite", "closed"] as const satisfies readonly SignupMode[];

export interface SignupConfig {
  mode: SignupMode;
  /** How long an invitation stays redeemable when whoever issues it names no expiry. */
  invitationTtlSeconds: number;
  /** Sign-up attempts (any outcome) from one client within clientWindowMs; past them, 429 for the window. */
  clientMax: number;
  clientWindowMs: number;
}

/** Bounds of an invitation's lifetime, whether SVC_INVITATION_TTL or its issuer names it. */
export const INVITATION_TTL_BOUNDS = { min: 60, max: 365 * 86400 } as const;

function signup(env: Env): SignupConfig {
  const { min, max } = INVITATION_TTL_BOUNDS;
  return {
    mode: oneOf(env, "SVC_SIGNUP", SIGNUP_MODES, "open"),
    invitationTtlSeconds: duration(env, "SVC_INVITATION_TTL", "7d", min, max),
    clientMax: integer(env, "SVC_SIGNUP_CLIENT_MAX", 30, 1, 1_000_000),
    clientWindowMs: duration(env, "SVC_SIGNUP_CLIENT_WINDOW", "1h", 1, 7 * 86400) * 1000,
  };
}

// Scheduled backups (SVC_BACKUP_EVERY, SVC_BACKUP_TO, SVC_BACKUP_KEEP, and the S3 client's S3_* or AWS_*
// variables): SQLite snapshots, verified and compressed, written to a folder or an S3-compatible bucket
// (src/backup/). PostgreSQL is backed up by its own tools (docs/backups.md).

/** SVC_BACKUP_TO: a folder (relative to the current one), or a bucket and a key prefix ("" or ending in "/"). */
export type BackupDestination = { kind: "folder"; path: string } | { kind: "s3"; bucket: string; prefix: string };

/**
 * The S3 client's settings: each from its S3_* variable, else its AWS_* one, as Bun's own client reads
 * them; passed to the client explicitly, since nothing below main.ts reads the environment. Secrets:
 * never logged, never shown.
 */
export interface S3Settings {
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
}

export interface BackupConfig {
  /** SVC_BACKUP_EVERY in seconds; null: no schedule (snapshots on demand only, where `to` is set). */
  everySeconds: number | null;
  /** SVC_BACKUP_TO; null: backups are not configured. */
  to: BackupDestination | null;
  /** SVC_BACKUP_KEEP: snapshots kept at `to`; older ones are deleted after each new one. */
  keep: number;
  s3: S3Settings;
}

const BACKUP_TO = "a folder, or s3://bucket/prefix (keys go in S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY)";
const S3_KEYS =
  "a bucket needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) set";
const POSTGRES_BACKUPS = "SQLite only: back PostgreSQL up with pg_dump or point-in-time recovery (docs/backups.md)";

function backup(env: Env): BackupConfig {
  const every = env.SVC_BACKUP_EVERY || undefined;
  const to = env.SVC_BACKUP_TO || undefined;
  const config: BackupConfig = {
    everySeconds: every === undefined ? null : duration(env, "SVC_BACKUP_EVERY", every, 1, 365 * 86400),
    to: to === undefined ? null : backupDestination(to),
    keep: integer(env, "SVC_BACKUP_KEEP", 14, 1, 10_000),
    s3: s3Settings(env),
  };
  if (config.everySeconds !== null && config.to === null)
    throw new ConfigError("SVC_BACKUP_TO", `required when SVC_BACKUP_EVERY is set: ${BACKUP_TO}`, "");
  const on = database(env);
  if (config.to !== null && on.kind === "sqlite" && on.path === ":memory:")
    throw new ConfigError(
      "SVC_BACKUP_TO",
      "a database in a file to back up (SVC_DATABASE_URL=sqlite::memory: has none)",
      to!,
    );
  if (on.kind === "postgres") {
    if (every !== undefined) throw new ConfigError("SVC_BACKUP_EVERY", POSTGRES_BACKUPS, every);
    if (to !== undefined) throw new ConfigError("SVC_BACKUP_TO", POSTGRES_BACKUPS, redactUrl(to));
  }
  // Bun's S3 client finds keys nowhere else (no instance role, no ~/.aws): without both, every
  // snapshot would fail at its upload, long after a start-up that looked fine.
  if (config.to?.kind === "s3" && !(config.s3.accessKeyId && config.s3.secretAccessKey))
    throw new ConfigError("SVC_BACKUP_TO", S3_KEYS, to!);
  return config;
}

function backupDestination(value: string): BackupDestination {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (value.trim() === "") throw new ConfigError("SVC_BACKUP_TO", BACKUP_TO, value);
    return { kind: "folder", path: value };
  }
  // Whatever is before an @ may be a key: it is neither taken nor repeated.
  const shown = value.replace(/^([a-z0-9+.-]+:\/\/)[^/@]*@/i, "$1***@");
  const match = scheme === "s3" ? /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/i.exec(value) : null;
  if (!match) throw new ConfigError("SVC_BACKUP_TO", BACKUP_TO, shown);
  const path = (match[2] ?? "").replace(/^\/+/, "");
  return { kind: "s3", bucket: match[1]!, prefix: path === "" || path.endsWith("/") ? path : `${path}/` };
}

function s3Settings(env: Env): S3Settings {
  const settings: S3Settings = {};
  const names = [
    ["endpoint", "ENDPOINT"],
    ["region", "REGION"],
    ["accessKeyId", "ACCESS_KEY_ID"],
    ["secretAccessKey", "SECRET_ACCESS_KEY"],
    ["sessionToken", "SESSION_TOKEN"],
  ] as const;
  for (const [field, name] of names) {
    const value = env[`S3_${name}`] || env[`AWS_${name}`];
    if (value) settings[field] = value;
  }
  return settings;
}

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    accepts: string,
    got: string,
  ) {
    super(`${variable}: ${accepts} (got ${JSON.stringify(got)})`);
    this.name = "ConfigError";
  }
}

/** OWASP's first argon2id recommendation: 19 MiB, 2 iterations, 1 lane. */
export const PRODUCTION_PASSWORD_COST: PasswordCost = Object.freeze({ memoryCost: 19456, timeCost: 2 });
/** argon2id at its cheapest, for tests that start svc as a process: they exercise the path, not the cost. */
export const MINIMAL_PASSWORD_COST: PasswordCost = Object.freeze({ memoryCost: 64, timeCost: 1 });

const MIN_SECRET_BYTES = 32;
/** 32 spaces or one repeated character pass a length check and are guessed at once. */
const MIN_SECRET_DISTINCT_BYTES = 16;
const MAKE_A_SECRET = "make one with: openssl rand -base64 48";

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
    signup: signup(env),
    ...operations(env, portVar),
  });
}

/** TLS, the operations listener and the metrics token (src/http/exposure.ts says who sees what). */
function operations(env: Env, portVar: string): Pick<Config, "tls" | "opsAddress" | "metricsToken"> {
  const port = integer(env, portVar, 8080, 0, 65535);
  return { tls: tlsFiles(env), opsAddress: opsAddress(env, port), metricsToken: metricsToken(env) };
}

/** Both paths or neither; whether the files are there and fit is for start-up to find (src/http/tls.ts). */
function tlsFiles(env: Env): TlsFiles | null {
  const certPath = env.SVC_TLS_CERT || undefined;
  const keyPath = env.SVC_TLS_KEY || undefined;
  if (certPath === undefined && keyPath === undefined) return null;
  if (certPath === undefined || keyPath === undefined) {
    const [missing, what, given] =
      certPath === undefined ? ["SVC_TLS_CERT", "certificate", "SVC_TLS_KEY"] : ["SVC_TLS_KEY", "key", "SVC_TLS_CERT"];
    throw new ConfigError(missing, `a PEM ${what} file, required when ${given} is set (both or neither)`, "");
  }
  return { certPath, keyPath };
}

/** host:port ([v6]:port), on another port than the public listener's. */
function opsAddress(env: Env, publicPort: number): ListenAddress | null {
  const value = env.SVC_OPS_ADDRESS;
  if (value === undefined || value === "") return null;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535)
    throw new ConfigError("SVC_OPS_ADDRESS", "host:port, such as 127.0.0.1:9090 or [::1]:9090", value);
  if (port !== 0 && port === publicPort)
    throw new ConfigError("SVC_OPS_ADDRESS", `a port other than the public listener's (${publicPort})`, value);
  return { host: match[1] ?? match[2]!, port };
}

/** Sent in a header, compared in constant time: printable ASCII without spaces, long enough not to be guessed. */
function metricsToken(env: Env): string | null {
  const value = env.SVC_METRICS_TOKEN;
  if (value === undefined || value === "") return null;
  if (!/^[\x21-\x7e]{24,}$/.test(value))
    throw new ConfigError(
      "SVC_METRICS_TOKEN",
      "at least 24 printable ASCII characters without spaces; make one with: openssl rand -base64 32",
      `${value.length} characters`,
    );
  return value;
}

/** SVC_PASSWORD_COST=minimal is for test processes only: anywhere else it would weaken every stored hash. */
function passwordCost(env: Env, environment: Environment): PasswordCost {
  const accepts = ["production", "minimal"] as const;
  const cost = oneOf(env, "SVC_PASSWORD_COST", accepts, "production");
  if (cost === "minimal" && environment !== "test")
    throw new ConfigError("SVC_PASSWORD_COST", "minimal only with SVC_ENV=test; otherwise production", cost);
  return cost === "minimal" ? MINIMAL_PASSWORD_COST : PRODUCTION_PASSWORD_COST;
}

function trustProxy(env: Env): number {
  const value = env.SVC_TRUST_PROXY;
  if (value === undefined || value === "" || value === "false") return 0;
  if (value === "true") return 1;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  throw new ConfigError("SVC_TRUST_PROXY", "false, true (one proxy) or the number of proxies in front of svc", value);
}

function origins(env: Env): string[] {
  const value = env.SVC_CORS_ORIGINS;
  if (value === undefined || value.trim() === "") return [];
  const list = value
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of list) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(
        "SVC_CORS_ORIGINS",
        "a comma-separated list of origins such as https://app.example.com",
        origin,
      );
    }
  }
  return list;
}

function jwtSecret(env: Env, production: boolean): Config["jwt"] {
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

function sessions(env: Env, accessTtl: number): SessionConfig {
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

function database(env: Env): DatabaseConfig {
  return parseDatabaseUrl(env.SVC_DATABASE_URL || "sqlite:data/svc.db", env, "SVC_DATABASE_URL");
}

/** A database URL, with the pool settings from env; `name` is what an error calls the URL. */
export function parseDatabaseUrl(url: string, env: Env, name: string): DatabaseConfig {
  // Parsed whatever the database, so a bad pool setting is caught before anyone needs it.
  const pool = {
    poolMax: integer(env, "SVC_DB_POOL_MAX", 10, 1, 1000),
    connectTimeoutS: duration(env, "SVC_DB_CONNECT_TIMEOUT", "5s", 1, 300),
    statementTimeoutMs: duration(env, "SVC_DB_STATEMENT_TIMEOUT", "5s", 1, 3600) * 1000,
    stalenessMs: duration(env, "SVC_DB_STALENESS", "1s", 0, 60) * 1000,
  };
  if (url.startsWith("sqlite:") && url.length > "sqlite:".length)
    return { kind: "sqlite", path: url.slice("sqlite:".length) };
  if (/^postgres(ql)?:\/\//.test(url) && URL.canParse(url) && new URL(url).hostname !== "")
    return { kind: "postgres", url, ...pool };
  throw new ConfigError(
    name,
    "sqlite:<path>, sqlite::memory: or postgres://user:password@host:port/database",
    redactUrl(url),
  );
}

/** The URL without its password, for logs and error messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}

function oneOf<const T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(name, `one of ${allowed.join(", ")}`, value);
}

function nonEmpty(env: Env, name: string, fallback: string): string {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if (value.trim() === "") throw new ConfigError(name, "a host name or address", value);
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  const parsed = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`, value);
  }
  return parsed;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ConfigError(name, "true or false", value);
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** "90", "90s", "15m", "1h" or "7d" in whole seconds; null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,15})([smhd]?)$/.exec(text);
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2] || "s"]! : NaN;
  return Number.isSafeInteger(seconds) ? seconds : null;
}

/** Parses a duration (see parseDuration) into whole seconds within [min, max]. */
function duration(env: Env, name: string, fallback: string, min: number, max: number): number {
  const value = env[name] || fallback;
  const seconds = parseDuration(value) ?? NaN;
  if (!(seconds >= min && seconds <= max)) {
    throw new ConfigError(name, `a duration such as 30s, 15m, 1h or 7d, from ${min}s to ${max}s`, value);
  }
  return seconds;
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

// A loop, not recursion: called once per node, a recursive walk crossed the JIT's threshold and
// compiled itself before svc listened (docs/performance.md, "Footprint": a start that compiles nothing
// holds less).
function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node && typeof node === "object" && !(node instanceof Uint8Array)) {
      pending.push(...Object.values(node));
      Object.freeze(node);
    }
  }
  return value;
}
