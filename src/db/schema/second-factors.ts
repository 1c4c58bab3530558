// The tables of second factors (docs/second-factors.md): the authenticator app, recovery codes,
// a login's second step, passkeys and the WebAuthn challenges they answer.
import { type AccountTables, lifetime, owner } from "./accounts.ts";
import type { Kit } from "./kit.ts";

export function secondFactorTables(c: Kit, { users }: AccountTables) {
  /** An authenticator app's secret (TOTP, RFC 6238): one per account, on once confirmed by a code. */
  const mfaTotp = c.table("mfa_totp", {
    userId: c
      .id("user_id")
      .primaryKey()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The base32 secret, sealed under the server's secret (lib/sealing.ts): a copy of the database signs in nobody. */
    secretSealed: c.text("secret_sealed").notNull(),
    createdAt: c.instant("created_at").notNull(),
    /** null while the enrolment waits for its first code; a factor only once confirmed. */
    confirmedAt: c.instant("confirmed_at"),
    /** The newest 30-second step a code was accepted for: a code is good once, on every instance (RFC 6238 §5.2). */
    lastStep: c.integer("last_step"),
  });

  /** One-time recovery codes, by SHA-256 digest (never the code): ten at a time, each spent once. */
  const mfaRecoveryCodes = c.table(
    "mfa_recovery_codes",
    {
      digest: c.text("digest").primaryKey(),
      ...owner(c, users),
      createdAt: c.instant("created_at").notNull(),
      usedAt: c.instant("used_at"),
    },
    (t) => [c.index("mfa_recovery_codes_user_id_idx").on(t.userId)],
  );

  /**
   * A login's second step: the right password gave an `mfa_token` (kept by digest) that one code completes
   * within 5 minutes; 5 wrong codes spend it. The session it starts takes the mode and client from here.
   */
  const mfaChallenges = c.table(
    "mfa_challenges",
    {
      digest: c.text("digest").primaryKey(),
      ...owner(c, users),
      /** "json" or "cookie": how the session it completes hands over its refresh token. */
      mode: c.text("mode").$type<"json" | "cookie">().notNull(),
      /** What the first step proved: "pwd" (RFC 8176's names, as the access token's amr claim). */
      firstFactor: c.text("first_factor").notNull(),
      /** The WebAuthn challenge offered for a passkey as the second step; null without passkeys. */
      webauthnChallenge: c.text("webauthn_challenge"),
      failures: c.integer("failures").notNull().default(0),
      ...lifetime(c),
      usedAt: c.instant("used_at"),
    },
    (t) => [
      c.index("mfa_challenges_user_id_idx").on(t.userId),
      c.index("mfa_challenges_expires_at_idx").on(t.expiresAt),
    ],
  );

  /** Passkeys (WebAuthn credentials), as @simplewebauthn/server reads and updates them. */
  const passkeys = c.table(
    "passkeys",
    {
      id: c.id("id").primaryKey(),
      ...owner(c, users),
      /** The credential's id, base64url: what a browser's assertion names. */
      credentialId: c.text("credential_id").notNull(),
      /** The COSE public key, base64url. */
      publicKey: c.text("public_key").notNull(),
      /** The authenticator's signature counter: a lower one than stored means a cloned authenticator. */
      counter: c.counter("counter").notNull().default(0),
      /** The transports the browser reported (usb, nfc, ble, internal, hybrid), comma-separated. */
      transports: c.text("transports"),
      /** "singleDevice" or "multiDevice" (synced), as the registration said. */
      deviceType: c.text("device_type").notNull(),
      /** 1 when the credential is backed up (synced), else 0. */
      backedUp: c.integer("backed_up").notNull().default(0),
      name: c.text("name").notNull(),
      createdAt: c.instant("created_at").notNull(),
      lastUsedAt: c.instant("last_used_at"),
    },
    (t) => [
      c.uniqueIndex("passkeys_credential_id_uq").on(t.credentialId),
      c.index("passkeys_user_id_idx").on(t.userId),
    ],
  );

  /** WebAuthn challenges handed out for a registration or a passkey sign-in: each good once, for 5 minutes. */
  const webauthnChallenges = c.table(
    "webauthn_challenges",
    {
      id: c.id("id").primaryKey(),
      /** The registering user; null for a sign-in, where the passkey names its user. */
      userId: c.id("user_id").references(() => users.id, { onDelete: "cascade" }),
      /** "register" or "sign_in". */
      purpose: c.text("purpose").$type<"register" | "sign_in">().notNull(),
      challenge: c.text("challenge").notNull(),
      ...lifetime(c),
    },
    // A challenge is taken by its value (takeChallenge): found by the index, not a scan of them all.
    (t) => [
      c.index("webauthn_challenges_expires_at_idx").on(t.expiresAt),
      c.index("webauthn_challenges_challenge_idx").on(t.challenge),
    ],
  );

  return { mfaTotp, mfaRecoveryCodes, mfaChallenges, passkeys, webauthnChallenges };
}
