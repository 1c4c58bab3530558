// SVC_DATABASE_URL and the pool settings: which database, and how svc connects to it.

import { ConfigError, duration, type Env, integer, withoutCredentials } from "./values.ts";

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

export function database(env: Env): DatabaseConfig {
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

/** The URL without its user and password, for logs and error messages. */
export const redactUrl = withoutCredentials;
