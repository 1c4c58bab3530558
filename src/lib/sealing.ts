// Sealing a value (AES-256-GCM) under a key derived from a label and a secret: whoever holds the
// secret again (a spent refresh token, an Idempotency-Key with the server's own secret) can open it;
// the database that stores the sealed text alone cannot.

import { createCipheriv } from "node:crypto";

const IV_BYTES = 12;

const keyBytes = (label: string, secret: string) =>
  new Uint8Array(new Bun.CryptoHasher("sha256").update(label).update(secret).digest());

function keyFor(label: string, secret: string, use: "encrypt" | "decrypt"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", keyBytes(label, secret), "AES-GCM", false, [use]);
}

/** The value as JSON, sealed, as base64url (IV, then ciphertext and tag). */
export async function sealUnder(label: string, secret: string, value: unknown): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plain = new TextEncoder().encode(JSON.stringify(value));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyFor(label, secret, "encrypt"), plain),
  );
  return Buffer.concat([iv, sealed]).toString("base64url");
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
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES) },
      await keyFor(label, secret, "decrypt"),
      bytes.subarray(IV_BYTES),
    );
    return JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return null;
  }
}
