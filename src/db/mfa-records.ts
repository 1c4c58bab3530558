// Second factors' records as stored: the authenticator app's row, recovery codes and a login's second
// step (both by digest), a passkey's row as `svc copy` moves it, what a user's factors add up to, and the
// fields each is selected by.

/** An authenticator app's row: pending (confirmedAt null) until its first code, then the account's factor. */
export interface TotpRecord {
  userId: string;
  /** The base32 secret, sealed under the server's secret. */
  secretSealed: string;
  createdAt: string;
  confirmedAt: string | null;
  /** The newest 30-second step a code was accepted for; null: none yet. */
  lastStep: number | null;
}

/** A recovery code as stored: its SHA-256 digest, never the code. */
export interface RecoveryCodeRecord {
  digest: string;
  userId: string;
  createdAt: string;
  usedAt: string | null;
}

/** A login's second step, by the digest of its mfa_token. */
export interface MfaChallengeRecord {
  digest: string;
  userId: string;
  mode: "json" | "cookie";
  /** What the first step proved, RFC 8176's name ("pwd"). */
  firstFactor: string;
  /** The WebAuthn challenge offered with it; null without passkeys. */
  webauthnChallenge: string | null;
  failures: number;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** A passkey row, as `svc copy` moves it (the passkey code, src/auth/passkeys/, reads and writes them). */
export interface PasskeyRow {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string | null;
  deviceType: string;
  backedUp: number;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** What a user's second factors add up to. */
export interface FactorSummary {
  totp: { confirmedAt: string | null; pending: boolean } | null;
  passkeys: number;
  recoveryCodesLeft: number;
}

/** How many second-factor rows a database holds: what `svc copy` checks besides users and categories. */
export interface FactorCounts {
  totp: number;
  recoveryCodes: number;
  passkeys: number;
}

export const TOTP_FIELDS = ["userId", "secretSealed", "createdAt", "confirmedAt", "lastStep"] as const;
export const RECOVERY_FIELDS = ["digest", "userId", "createdAt", "usedAt"] as const;
export const CHALLENGE_FIELDS = [
  "digest",
  "userId",
  "mode",
  "firstFactor",
  "webauthnChallenge",
  "failures",
  "createdAt",
  "expiresAt",
  "usedAt",
] as const;
export const PASSKEY_FIELDS = [
  "id",
  "userId",
  "credentialId",
  "publicKey",
  "counter",
  "transports",
  "deviceType",
  "backedUp",
  "name",
  "createdAt",
  "lastUsedAt",
] as const satisfies readonly (keyof PasskeyRow)[];
