// Sealing a value (AES-256-GCM) under a key derived from a label and a secret: whoever holds the
// secret again (a spent refresh token, an Idempotency-Key with the server's own secret) can open it;
// the database that stores the sealed text alone cannot.

const IV_BYTES = 12;

function keyFor(label: string, secret: string, use: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const bytes = new Uint8Array(new Bun.CryptoHasher("sha256").update(label).update(secret).digest());
  return crypto.subtle.importKey("raw", bytes, "AES-GCM", false, [use]);
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
