// The one-time tokens mailed links carry: 32 random bytes in base64url (43 characters), stored only as
// their SHA-256 digest, so the database alone yields no working link.
import { t } from "elysia";
import { AppError } from "../errors/index.ts";

const TOKEN_BYTES = 32;
/** 32 random bytes in unpadded base64url: what a link carries. */
export const LINK_TOKEN_PATTERN = "^[A-Za-z0-9_-]{43}$";

export function newLinkToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))).toString("base64url");
}

/** What the database keeps of a token, and looks it up by. */
export function linkTokenDigest(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("base64url");
}

/** A token as request bodies take it: anything else is validation_failed before any lookup. */
export const linkToken = t.String({
  pattern: LINK_TOKEN_PATTERN,
  description: "The token from the mailed link (its fragment's token=…): 43 characters of base64url.",
});

/** Seconds a link works: a reset for 30 minutes, a change of address for 24 hours. */
export const LINK_TTL = { password_reset: 30 * 60, email_change: 24 * 3600 } as const;

/** A link's token that names nothing live: unknown, used, or replaced by a newer one. */
export const invalidLink = () =>
  new AppError("invalid_mail_token", "This link is not valid (unknown, used or replaced); ask for a new one.");

export const expiredLink = () => new AppError("mail_token_expired", "This link has expired; ask for a new one.");
