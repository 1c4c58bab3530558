// The SQLite tables of accounts and signing in: the users, their sessions and refresh tokens, access
// tokens revoked one by one, failed logins, the one-time codes that act on an account (a reset an
// administrator issued, an invitation, a token sent by mail), and identities at OpenID providers.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { AccountStatus, Role } from "../../records.ts";
import { lifetime } from "./columns.ts";

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    /** Lower-cased username: the unique index makes "Ann" and "ann" one account. */
    usernameKey: text("username_key").notNull(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    tokenVersion: integer("token_version").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** "user" or "admin". */
    role: text("role").$type<Role>().notNull().default("user"),
    /** "active" or "disabled": a disabled account cannot log in, and has no sessions. */
    status: text("status").$type<AccountStatus>().notNull().default("active"),
    /** Left out of the users table's version trigger: a login is not a change anyone's cache must see. */
    lastLoginAt: text("last_login_at"),
    /** When the account's e-mail address was shown to be its owner's (a link redeemed, or an administrator); null: never. */
    emailVerifiedAt: text("email_verified_at"),
  },
  (t) => [
    uniqueIndex("users_username_key_uq").on(t.usernameKey),
    uniqueIndex("users_email_uq").on(t.email),
    index("users_role_status_idx").on(t.role, t.status),
  ],
);

/** The account a row belongs to: the row goes when the account does. */
export const owner = () => ({
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
});

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

/**
 * One-time password reset codes an administrator issued, by SHA-256 digest: at most one outstanding
 * per user (a new one replaces it), deleted when redeemed.
 */
export const passwordResets = sqliteTable(
  "password_resets",
  {
    digest: text("digest").primaryKey(),
    ...owner(),
    ...lifetime(),
    /** The administrator who issued it (kept as an id: the audit log names them too). */
    issuedBy: text("issued_by"),
  },
  (t) => [
    uniqueIndex("password_resets_user_id_uq").on(t.userId),
    index("password_resets_expires_at_idx").on(t.expiresAt),
  ],
);

/**
 * One-time invitation codes an administrator issued (SVC_SIGNUP=invite), by SHA-256 digest: spent by the
 * sign-up that redeems them, in the same change as the account. Issuer and user are ids without
 * foreign keys, as in the audit log: the invitation's record outlives the accounts it names.
 */
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    digest: text("digest").notNull(),
    /** Lower case; null: anyone with the code may sign up with it. */
    email: text("email"),
    createdBy: text("created_by"),
    ...lifetime(),
    /** null: not redeemed yet. */
    usedAt: text("used_at"),
    usedBy: text("used_by"),
  },
  (t) => [uniqueIndex("invitations_digest_uq").on(t.digest), index("invitations_expires_at_idx").on(t.expiresAt)],
);

/**
 * One-time tokens sent by mail, by SHA-256 digest (never the token): an e-mail verification, a password
 * reset, or an e-mail change. Spent by deleting the row in the change it allows; a new one of a kind
 * replaces the user's earlier ones.
 */
export const accountTokens = sqliteTable(
  "account_tokens",
  {
    digest: text("digest").primaryKey(),
    /** "email_verification", "password_reset" or "email_change". */
    kind: text("kind").$type<"email_verification" | "password_reset" | "email_change">().notNull(),
    ...owner(),
    /** The address it was sent to: for a verification, the one verified; for a change, the new address. */
    email: text("email").notNull(),
    ...lifetime(),
  },
  (t) => [
    index("account_tokens_user_id_kind_idx").on(t.userId, t.kind),
    index("account_tokens_expires_at_idx").on(t.expiresAt),
  ],
);

/** An account's identity at an OpenID provider: its issuer and subject are the identity, never the e-mail. */
export const identities = sqliteTable(
  "identities",
  {
    id: text("id").primaryKey(),
    ...owner(),
    /** The provider's name in SVC_OIDC_PROVIDERS when it was linked: what the account's list shows. */
    provider: text("provider").notNull(),
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    /** The address the provider gave at the last sign-in, if any: shown, never matched on. */
    email: text("email"),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [
    uniqueIndex("identities_issuer_subject_uq").on(t.issuer, t.subject),
    // One identity per provider per account: unlinking names the provider.
    uniqueIndex("identities_user_id_provider_uq").on(t.userId, t.provider),
  ],
);

/** The one-time codes a sign-in with mode=code ends in (60 s), traded once for a session; kept by digest only. */
export const oidcCodes = sqliteTable(
  "oidc_codes",
  {
    digest: text("digest").primaryKey(),
    ...owner(),
    /** How the user signed in (RFC 8176's names, comma-separated), for the session the code becomes. */
    amr: text("amr").notNull(),
    ...lifetime(),
    usedAt: text("used_at"),
  },
  (t) => [index("oidc_codes_expires_at_idx").on(t.expiresAt)],
);
