// The SQLite tables of signing in: sessions and their refresh tokens, access tokens revoked one by one,
// and the failed logins that throttle the next.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { owner } from "./accounts.ts";

/** A login's session: its refresh tokens renew its access tokens, which name it in their `sid` claim. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    ...owner(),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at").notNull(),
    /** When its newest refresh token expires (never past the session's absolute limit): then it is over. */
    expiresAt: text("expires_at").notNull(),
    userAgent: text("user_agent"),
    clientAddress: text("client_address"),
    /** How the session signed in, RFC 8176's names comma-separated: "pwd", "pwd,otp", "hwk". */
    amr: text("amr").notNull().default("pwd"),
    /** When a second factor was last shown in this session (its login or a step-up); null: never. */
    mfaAt: text("mfa_at"),
  },
  (t) => [index("sessions_user_id_idx").on(t.userId), index("sessions_expires_at_idx").on(t.expiresAt)],
);

/**
 * Refresh tokens by their SHA-256 digest: the current one of each session, and those rotated away,
 * kept until they expire so that presenting one again is recognised as reuse.
 */
export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    digest: text("digest").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    expiresAt: text("expires_at").notNull(),
    /** null: the current token. */
    rotatedAt: text("rotated_at"),
    /** The answer its rotation gave, sealed with a key only this token yields: replayed within the reuse window. */
    successor: text("successor"),
  },
  (t) => [
    index("refresh_tokens_session_id_idx").on(t.sessionId),
    index("refresh_tokens_expires_at_idx").on(t.expiresAt),
  ],
);

/** Tokens revoked one by one (logout), kept until they would have expired anyway. */
export const revokedTokens = sqliteTable(
  "revoked_tokens",
  {
    jti: text("jti").primaryKey(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("revoked_tokens_expires_at_idx").on(t.expiresAt)],
);

/** Failed-login state, shared by every instance: one row per account or client key. */
export const loginThrottle = sqliteTable("login_throttle", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  lastFailureAt: text("last_failure_at").notNull(),
  blockedUntil: text("blocked_until"),
});
