// Sealing a value (AES-256-GCM) under a key derived from a label and a secret: whoever holds the
// secret again (a spent refresh token, an Idempotency-Key with the server's own secret) can open it;
// the database that stores the sealed text alone cannot.

import { createCipheriv, createDecipheriv } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

const keyBytes = (label: string, secret: string) =>
  new Uint8Array(new Bun.CryptoHasher("sha256").update(label).update(secret).digest());

/**
 * The value as JSON, sealed, as base64url (IV, then ciphertext and tag). node:crypto's cipher, at once:
 * WebCrypto's importKey and encrypt were two trips to its worker threads for a few hundred bytes (#59).
 */
export async function sealUnder(label: string, secret: string, value: unknown): Promise<string> {
  return sealUnderNow(label, secret, value);
}

/**
 * sealUnder without waiting, for a value sealed where the caller cannot wait (a mail composed inside a
 * transaction's callback): the same text, which unsealUnder opens.
 */
export function sealUnderNow(label: string, secret: string, value: unknown): string {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const cipher = createCipheriv("aes-256-gcm", keyBytes(label, secret), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final(), cipher.getAuthTag()]);
  return Buffer.concat([iv, sealed]).toString("base64url");
}

/** What sealUnder sealed; null when the text was not sealed under this label and secret (or was altered). */
export async function unsealUnder(label: string, secret: string, text: string): Promise<unknown> {
  const bytes = Buffer.from(text, "base64url");
  if (bytes.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyBytes(label, secret), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(plain.toString("utf8"));
  } catch {
    return null;
  }
}
