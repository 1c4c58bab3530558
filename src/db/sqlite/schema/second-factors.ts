// The SQLite tables of second factors (docs/second-factors.md): the authenticator app, recovery codes,
// a login's second step, passkeys and the WebAuthn challenges they answer.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { owner, users } from "./accounts.ts";
import { lifetime } from "./columns.ts";

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
    ...owner(),
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
    ...owner(),
    /** "json" or "cookie": how the session it completes hands over its refresh token. */
    mode: text("mode").$type<"json" | "cookie">().notNull(),
    /** What the first step proved: "pwd" (RFC 8176's names, as the access token's amr claim). */
    firstFactor: text("first_factor").notNull(),
    /** The WebAuthn challenge offered for a passkey as the second step; null without passkeys. */
    webauthnChallenge: text("webauthn_challenge"),
    failures: integer("failures").notNull().default(0),
    ...lifetime(),
    usedAt: text("used_at"),
  },
  (t) => [index("mfa_challenges_user_id_idx").on(t.userId), index("mfa_challenges_expires_at_idx").on(t.expiresAt)],
);

/** Passkeys (WebAuthn credentials), as @simplewebauthn/server reads and updates them. */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: text("id").primaryKey(),
    ...owner(),
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
    ...lifetime(),
  },
  // A challenge is taken by its value (takeChallenge): found by the index, not a scan of them all.
  (t) => [
    index("webauthn_challenges_expires_at_idx").on(t.expiresAt),
    index("webauthn_challenges_challenge_idx").on(t.challenge),
  ],
);
