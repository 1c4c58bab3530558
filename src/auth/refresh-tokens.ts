// Refresh tokens: 256 random bits, stored only as their SHA-256 digest. The answer a rotation gave is
// kept sealed (AES-256-GCM) under a key derived from the rotated token itself, so only whoever presents
// that token again can read it: the database alone yields neither the tokens nor the answers.
import { sealUnder, unsealUnder } from "../lib/sealing.ts";

const TOKEN_BYTES = 32;
/** 32 bytes in unpadded base64url. */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const SEAL_LABEL = "svc/refresh-successor\0";

export function newRefreshToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))).toString("base64url");
}

/** Whether the text could be a refresh token svc issued; anything else is refused unread. */
export function looksLikeRefreshToken(token: string): boolean {
  return TOKEN_FORMAT.test(token);
}

/** What the database keeps of a token, and looks it up by. */
export function refreshDigest(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("base64url");
}

/** The value sealed under a key only `token` yields, as base64url (IV, then ciphertext and tag). */
export const seal = (token: string, value: unknown): Promise<string> => sealUnder(SEAL_LABEL, token, value);

/** What `seal` sealed; null when the text was not sealed under this token (or was altered). */
export const unseal = (token: string, text: string): Promise<unknown> => unsealUnder(SEAL_LABEL, token, text);
