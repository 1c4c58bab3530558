// SQLite tables. Timestamps are ISO-8601 UTC text so that string order is time order.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { AuditAction } from "../../audit/actions.ts";
import type { AuditEvent } from "../records.ts";
import type { AccountStatus, Role } from "../records.ts";

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

export const categories = sqliteTable(
  "categories",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Trimmed, NFC, lower-cased name: uniqueness without regard to case. */
    nameKey: text("name_key").notNull(),
    description: text("description"),
    colorHex: text("color_hex").notNull(),
    icon: text("icon"),
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** 1 when created, one more with every update: what ifVersion is compared with. */
    version: integer("version").notNull().default(1),
  },
  (t) => [uniqueIndex("categories_name_key_uq").on(t.nameKey), index("categories_created_by_idx").on(t.createdBy)],
);

/**
 * Every committed change to a category, in commit order (written by the categories' triggers: migration
 * category_event_log): what a subscription resumes from (`categoryEvents(after:)`). Bounded by
 * SVC_EVENTS_KEEP and SVC_EVENTS_KEEP_FOR.
 */
export const categoryEvents = sqliteTable(
  "category_events",
  {
    /** Increasing in commit order, never reused: the cursor's number. */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    kind: text("kind").$type<"CREATED" | "UPDATED" | "DELETED">().notNull(),
    categoryId: text("category_id").notNull(),
    /** The category after the change, as JSON of its columns; null for DELETED. */
    row: text("row"),
  },
  (t) => [index("category_events_at_idx").on(t.at)],
);

/**
 * This database's identity (`id`), made once when the database is and kept across restore and `svc copy`: the
 * snapshots at a backup destination that are this database's carry it in their names. And its event log's epoch,
 * made anew by a restore or a copy (whose event numbers go on from another history): a cursor carries it, so a
 * cursor from another database or from a history discarded is told apart (RESYNC).
 */
export const svcDatabase = sqliteTable("svc_database", {
  id: text("id").primaryKey(),
  epoch: text("epoch"),
});

/** Failed-login state, shared by every instance: one row per account or client key. */
export const loginThrottle = sqliteTable("login_throttle", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  lastFailureAt: text("last_failure_at").notNull(),
  blockedUntil: text("blocked_until"),
});

/** Tokens revoked one by one (logout), kept until they would have expired anyway. */
export const revokedTokens = sqliteTable(
  "revoked_tokens",
  {
    jti: text("jti").primaryKey(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("revoked_tokens_expires_at_idx").on(t.expiresAt)],
);

/** A counter per table, bumped by triggers on every write (see the custom migration): caches ask it. */
export const tableVersions = sqliteTable("table_versions", {
  name: text("name").primaryKey(),
  version: integer("version").notNull(),
});

/** A login's session: its refresh tokens renew its access tokens, which name it in their `sid` claim. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
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

/**
 * One-time password reset codes an administrator issued, by SHA-256 digest: at most one outstanding
 * per user (a new one replaces it), deleted when redeemed.
 */
export const passwordResets = sqliteTable(
  "password_resets",
  {
    digest: text("digest").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
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
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    /** null: not redeemed yet. */
    usedAt: text("used_at"),
    usedBy: text("used_by"),
  },
  (t) => [uniqueIndex("invitations_digest_uq").on(t.digest), index("invitations_expires_at_idx").on(t.expiresAt)],
);

/**
 * Who did what: one row per event, written in the same transaction as the change it records. Actor
 * and target are ids without foreign keys, so the record outlives the accounts it names.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    /** UUIDv7: id order is time order, newest last. */
    id: text("id").primaryKey(),
    at: text("at").notNull(),
    action: text("action").$type<AuditAction>().notNull(),
    actorId: text("actor_id"),
    /** A user's id, or a category's for category events. */
    targetId: text("target_id"),
    clientAddress: text("client_address"),
    requestId: text("request_id"),
    /** "success" or "failure". */
    outcome: text("outcome").$type<AuditEvent["outcome"]>().notNull(),
    /** A JSON object of non-secret particulars (the fields changed, a scope, a reason), or null. */
    detail: text("detail"),
  },
  (t) => [
    index("audit_events_at_idx").on(t.at),
    index("audit_events_action_idx").on(t.action, t.id),
    index("audit_events_actor_id_idx").on(t.actorId, t.id),
    index("audit_events_target_id_idx").on(t.targetId, t.id),
  ],
);

/**
 * Answers kept for Idempotency-Key retries: one row per caller and key (its SHA-256 digest), claimed
 * before the request runs and completed with its answer, sealed (AES-GCM) under a key only the
 * server's secret and the client's key together yield. Kept until expires_at.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** "user:<id>" or "client:<address>". */
    caller: text("caller").notNull(),
    key: text("key").notNull(),
    /** SHA-256 of the method, path and body: the same key with another request is refused. */
    fingerprint: text("fingerprint").notNull(),
    /** null while the first request runs. */
    status: integer("status"),
    answer: text("answer"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    /** While the first request runs, how long its claim holds: a crashed instance's claim lapses. */
    lockedUntil: text("locked_until").notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] }), index("idempotency_keys_expires_at_idx").on(t.expiresAt)],
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
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The address it was sent to: for a verification, the one verified; for a change, the new address. */
    email: text("email").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [
    index("account_tokens_user_id_kind_idx").on(t.userId, t.kind),
    index("account_tokens_expires_at_idx").on(t.expiresAt),
  ],
);

// Second factors (docs/second-factors.md).

/** An authenticator app's secret (TOTP, RFC 6238): one per account, on once confirmed by a code. */
export const mfaTotp = sqliteTable("mfa_totp", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  /** The base32 secret, sealed under the server's secret (lib/sealing.ts): a copy of the database signs in nobody. */
  secretSealed: text("secret_sealed").notNull(),
  createdAt: text("created_at").notNull(),
  /** null while the enrolment waits for its first code; a factor only once confirmed. */
  confirmedAt: text("confirmed_at"),
  /** The newest 30-second step a code was accepted for: a code is good once, on every instance (RFC 6238 §5.2). */
  lastStep: integer("last_step"),
});

/** One-time recovery codes, by SHA-256 digest (never the code): ten at a time, each spent once. */
export const mfaRecoveryCodes = sqliteTable(
  "mfa_recovery_codes",
  {
    digest: text("digest").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [index("mfa_recovery_codes_user_id_idx").on(t.userId)],
);

/**
 * A login's second step: the right password gave an `mfa_token` (kept by digest) that one code completes
 * within 5 minutes; 5 wrong codes spend it. The session it starts takes the mode and client from here.
 */
export const mfaChallenges = sqliteTable(
  "mfa_challenges",
  {
    digest: text("digest").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** "json" or "cookie": how the session it completes hands over its refresh token. */
    mode: text("mode").$type<"json" | "cookie">().notNull(),
    /** What the first step proved: "pwd" (RFC 8176's names, as the access token's amr claim). */
    firstFactor: text("first_factor").notNull(),
    /** The WebAuthn challenge offered for a passkey as the second step; null without passkeys. */
    webauthnChallenge: text("webauthn_challenge"),
    failures: integer("failures").notNull().default(0),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [index("mfa_challenges_user_id_idx").on(t.userId), index("mfa_challenges_expires_at_idx").on(t.expiresAt)],
);

/** Passkeys (WebAuthn credentials), as @simplewebauthn/server reads and updates them. */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The credential's id, base64url: what a browser's assertion names. */
    credentialId: text("credential_id").notNull(),
    /** The COSE public key, base64url. */
    publicKey: text("public_key").notNull(),
    /** The authenticator's signature counter: a lower one than stored means a cloned authenticator. */
    counter: integer("counter").notNull().default(0),
    /** The transports the browser reported (usb, nfc, ble, internal, hybrid), comma-separated. */
    transports: text("transports"),
    /** "singleDevice" or "multiDevice" (synced), as the registration said. */
    deviceType: text("device_type").notNull(),
    /** 1 when the credential is backed up (synced), else 0. */
    backedUp: integer("backed_up").notNull().default(0),
    name: text("name").notNull(),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [uniqueIndex("passkeys_credential_id_uq").on(t.credentialId), index("passkeys_user_id_idx").on(t.userId)],
);

/** WebAuthn challenges handed out for a registration or a passkey sign-in: each good once, for 5 minutes. */
export const webauthnChallenges = sqliteTable(
  "webauthn_challenges",
  {
    id: text("id").primaryKey(),
    /** The registering user; null for a sign-in, where the passkey names its user. */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    /** "register" or "sign_in". */
    purpose: text("purpose").$type<"register" | "sign_in">().notNull(),
    challenge: text("challenge").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  // A challenge is taken by its value (takeChallenge): found by the index, not a scan of them all.
  (t) => [
    index("webauthn_challenges_expires_at_idx").on(t.expiresAt),
    index("webauthn_challenges_challenge_idx").on(t.challenge),
  ],
);

export { mailOutbox } from "./mail-schema.ts";
export { identities, oidcCodes } from "./identity-schema.ts";
