// Scheduled backups (SVC_BACKUP_EVERY, SVC_BACKUP_TO, SVC_BACKUP_KEEP, and the S3 client's S3_* or AWS_*
// variables): SQLite snapshots, verified and compressed, written to a folder or an S3-compatible bucket
// (src/backup/). PostgreSQL is backed up by its own tools (docs/backups.md).

import { database, redactUrl } from "./database.ts";
import { ConfigError, duration, type Env, integer, withoutCredentials } from "./values.ts";

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

export function backup(env: Env): BackupConfig {
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
  const shown = withoutCredentials(value);
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
