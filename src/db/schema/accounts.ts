// The tables of accounts and signing in: the users, their sessions and refresh tokens, access
// tokens revoked one by one, failed logins, the one-time codes that act on an account (a reset an
// administrator issued, an invitation, a token sent by mail), and identities at OpenID providers.
import type { AccountStatus, Role } from "../records.ts";
import type { AnyColumn } from "drizzle-orm";
import type { Kit } from "./kit.ts";

/** When the row was made, and when it lapses (it is pruned after). */
export const lifetime = (c: Kit) => ({
  createdAt: c.instant("created_at").notNull(),
  expiresAt: c.instant("expires_at").notNull(),
});

/** The account a row belongs to: the row goes when the account does. */
export const owner = (c: Kit, users: { id: AnyColumn }) => ({
  userId: c
    .id("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
});

export function accountTables(c: Kit) {
  const users = c.table(
    "users",
    {
      id: c.id("id").primaryKey(),
      username: c.text("username").notNull(),
      /** Lower-cased username: the unique index makes "Ann" and "ann" one account. */
      usernameKey: c.text("username_key").notNull(),
      email: c.text("email").notNull(),
      passwordHash: c.text("password_hash").notNull(),
      tokenVersion: c.integer("token_version").notNull().default(0),
      createdAt: c.instant("created_at").notNull(),
      updatedAt: c.instant("updated_at").notNull(),
      /** "user" or "admin". */
      role: c.text("role").$type<Role>().notNull().default("user"),
      /** "active" or "disabled": a disabled account cannot log in, and has no sessions. */
      status: c.text("status").$type<AccountStatus>().notNull().default("active"),
      /** Left out of the users table's version trigger: a login is not a change anyone's cache must see. */
      lastLoginAt: c.instant("last_login_at"),
      /**
       * When the account's e-mail address was shown to be its owner's (a link redeemed, or an administrator);
       * null: never.
       */
      emailVerifiedAt: c.instant("email_verified_at"),
    },
    (t) => [
      c.uniqueIndex("users_username_key_uq").on(t.usernameKey),
      c.uniqueIndex("users_email_uq").on(t.email),
      c.index("users_role_status_idx").on(t.role, t.status),
    ],
  );

  /** A login's session: its refresh tokens renew its access tokens, which name it in their `sid` claim. */
  const sessions = c.table(
    "sessions",
    {
      id: c.id("id").primaryKey(),
      ...owner(c, users),
      createdAt: c.instant("created_at").notNull(),
      lastUsedAt: c.instant("last_used_at").notNull(),
      /** When its newest refresh token expires (never past the session's absolute limit): then it is over. */
      expiresAt: c.instant("expires_at").notNull(),
      userAgent: c.text("user_agent"),
      clientAddress: c.text("client_address"),
      /** How the session signed in, RFC 8176's names comma-separated: "pwd", "pwd,otp", "hwk". */
      amr: c.text("amr").notNull().default("pwd"),
      /** When a second factor was last shown in this session (its login or a step-up); null: never. */
      mfaAt: c.instant("mfa_at"),
    },
    (t) => [c.index("sessions_user_id_idx").on(t.userId), c.index("sessions_expires_at_idx").on(t.expiresAt)],
  );

  /**
   * Refresh tokens by their SHA-256 digest: the current one of each session, and those rotated away,
   * kept until they expire so that presenting one again is recognised as reuse.
   */
  const refreshTokens = c.table(
    "refresh_tokens",
    {
      digest: c.text("digest").primaryKey(),
      sessionId: c
        .id("session_id")
        .notNull()
        .references(() => sessions.id, { onDelete: "cascade" }),
      expiresAt: c.instant("expires_at").notNull(),
      /** null: the current token. */
      rotatedAt: c.instant("rotated_at"),
      /** The answer its rotation gave, sealed with a key only this token yields: replayed within the reuse window. */
      successor: c.text("successor"),
    },
    (t) => [
      c.index("refresh_tokens_session_id_idx").on(t.sessionId),
      c.index("refresh_tokens_expires_at_idx").on(t.expiresAt),
    ],
  );

  /** Tokens revoked one by one (logout), kept until they would have expired anyway. */
  const revokedTokens = c.table(
    "revoked_tokens",
    {
      jti: c.text("jti").primaryKey(),
      expiresAt: c.instant("expires_at").notNull(),
    },
    (t) => [c.index("revoked_tokens_expires_at_idx").on(t.expiresAt)],
  );

  /** Failed-login state, shared by every instance: one row per account or client key. */
  const loginThrottle = c.table("login_throttle", {
    key: c.text("key").primaryKey(),
    failures: c.integer("failures").notNull(),
    lastFailureAt: c.instant("last_failure_at").notNull(),
    blockedUntil: c.instant("blocked_until"),
  });

  /**
   * One-time password reset codes an administrator issued, by SHA-256 digest: at most one outstanding
   * per user (a new one replaces it), deleted when redeemed.
   */
  const passwordResets = c.table(
    "password_resets",
    {
      digest: c.text("digest").primaryKey(),
      ...owner(c, users),
      ...lifetime(c),
      /** The administrator who issued it (kept as an id: the audit log names them too). */
      issuedBy: c.id("issued_by"),
    },
    (t) => [
      c.uniqueIndex("password_resets_user_id_uq").on(t.userId),
      c.index("password_resets_expires_at_idx").on(t.expiresAt),
    ],
  );

  /**
   * One-time invitation codes an administrator issued (SVC_SIGNUP=invite), by SHA-256 digest: spent by the
   * sign-up that redeems them, in the same change as the account. Issuer and user are ids without
   * foreign keys, as in the audit log: the invitation's record outlives the accounts it names.
   */
  const invitations = c.table(
    "invitations",
    {
      id: c.id("id").primaryKey(),
      digest: c.text("digest").notNull(),
      /** Lower case; null: anyone with the code may sign up with it. */
      email: c.text("email"),
      createdBy: c.id("created_by"),
      ...lifetime(c),
      /** null: not redeemed yet. */
      usedAt: c.instant("used_at"),
      usedBy: c.id("used_by"),
    },
    (t) => [c.uniqueIndex("invitations_digest_uq").on(t.digest), c.index("invitations_expires_at_idx").on(t.expiresAt)],
  );

  /**
   * One-time tokens sent by mail, by SHA-256 digest (never the token): an e-mail verification, a password
   * reset, or an e-mail change. Spent by deleting the row in the change it allows; a new one of a kind
   * replaces the user's earlier ones.
   */
  const accountTokens = c.table(
    "account_tokens",
    {
      digest: c.text("digest").primaryKey(),
      /** "email_verification", "password_reset" or "email_change". */
      kind: c.text("kind").$type<"email_verification" | "password_reset" | "email_change">().notNull(),
      ...owner(c, users),
      /** The address it was sent to: for a verification, the one verified; for a change, the new address. */
      email: c.text("email").notNull(),
      ...lifetime(c),
    },
    (t) => [
      c.index("account_tokens_user_id_kind_idx").on(t.userId, t.kind),
      c.index("account_tokens_expires_at_idx").on(t.expiresAt),
    ],
  );

  /** An account's identity at an OpenID provider: its issuer and subject are the identity, never the e-mail. */
  const identities = c.table(
    "identities",
    {
      id: c.id("id").primaryKey(),
      ...owner(c, users),
      /** The provider's name in SVC_OIDC_PROVIDERS when it was linked: what the account's list shows. */
      provider: c.text("provider").notNull(),
      issuer: c.text("issuer").notNull(),
      subject: c.text("subject").notNull(),
      /** The address the provider gave at the last sign-in, if any: shown, never matched on. */
      email: c.text("email"),
      createdAt: c.instant("created_at").notNull(),
      lastUsedAt: c.instant("last_used_at"),
    },
    (t) => [
      c.uniqueIndex("identities_issuer_subject_uq").on(t.issuer, t.subject),
      // One identity per provider per account: unlinking names the provider.
      c.uniqueIndex("identities_user_id_provider_uq").on(t.userId, t.provider),
    ],
  );

  /** The one-time codes a sign-in with mode=code ends in (60 s), traded once for a session; kept by digest only. */
  const oidcCodes = c.table(
    "oidc_codes",
    {
      digest: c.text("digest").primaryKey(),
      ...owner(c, users),
      /** How the user signed in (RFC 8176's names, comma-separated), for the session the code becomes. */
      amr: c.text("amr").notNull(),
      ...lifetime(c),
      usedAt: c.instant("used_at"),
    },
    (t) => [c.index("oidc_codes_expires_at_idx").on(t.expiresAt)],
  );

  return {
    users,
    sessions,
    refreshTokens,
    revokedTokens,
    loginThrottle,
    passwordResets,
    invitations,
    accountTokens,
    identities,
    oidcCodes,
  };
}

export type AccountTables = ReturnType<typeof accountTables>;
