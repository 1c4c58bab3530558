// Refresh tokens: 256 random bits, stored only as their SHA-256 digest. The answer a rotation gave is
// kept sealed (AES-256-GCM) under a key derived from the rotated token itself, so only whoever presents
// that token again can read it: the database alone yields neither the tokens nor the answers.

const TOKEN_BYTES = 32;
/** 32 bytes in unpadded base64url. */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;
const SEAL_LABEL = "svc/refresh-successor\0";
const IV_BYTES = 12;

export function newRefreshToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))).toString("base64url");
}

/** Whether the text could be a refresh token svc issued; anything else is refused unread. */
export function wellFormed(token: string): boolean {
  return TOKEN_FORMAT.test(token);
}

/** What the database keeps of a token, and looks it up by. */
export function refreshDigest(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("base64url");
}

function sealKey(token: string, use: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const bytes = new Uint8Array(new Bun.CryptoHasher("sha256").update(SEAL_LABEL).update(token).digest());
  return crypto.subtle.importKey("raw", bytes, "AES-GCM", false, [use]);
}

/** The value sealed under a key only `token` yields, as base64url (IV, then ciphertext and tag). */
export async function seal(token: string, value: unknown): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plain = new TextEncoder().encode(JSON.stringify(value));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealKey(token, "encrypt"), plain),
  );
  return Buffer.concat([iv, sealed]).toString("base64url");
}

/** What `seal` sealed; null when the text was not sealed under this token (or was altered). */
export async function unseal(token: string, text: string): Promise<unknown> {
  const bytes = Buffer.from(text, "base64url");
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES) },
      await sealKey(token, "decrypt"),
      bytes.subarray(IV_BYTES),
    );
    return JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return null;
  }
}
