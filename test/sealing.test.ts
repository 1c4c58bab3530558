// Sealed texts stay readable across the change of cipher implementation: TOTP secrets and a rotation's
// answer sealed by WebCrypto before are stored, and must open after; what is sealed now opens by WebCrypto.
import { describe, expect, test } from "bun:test";
import { sealUnder, sealUnderNow, unsealUnder } from "../src/lib/sealing.ts";

const LABEL = "svc/test-label\0";
const SECRET = "a secret only the holder has";

const webKey = async (use: "encrypt" | "decrypt") =>
  crypto.subtle.importKey(
    "raw",
    new Uint8Array(new Bun.CryptoHasher("sha256").update(LABEL).update(SECRET).digest()),
    "AES-GCM",
    false,
    [use],
  );

describe("sealing", () => {
  test("opens a text WebCrypto sealed, in the stored format (IV, ciphertext, tag)", async () => {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const plain = new TextEncoder().encode(JSON.stringify({ token: "t", n: 1 }));
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await webKey("encrypt"), plain));
    const text = Buffer.concat([iv, sealed]).toString("base64url");
    expect(await unsealUnder(LABEL, SECRET, text)).toEqual({ token: "t", n: 1 });
  });

  test("seals a text WebCrypto opens", async () => {
    for (const text of [await sealUnder(LABEL, SECRET, ["a", 2]), sealUnderNow(LABEL, SECRET, ["a", 2])]) {
      const bytes = Buffer.from(text, "base64url");
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: bytes.subarray(0, 12) },
        await webKey("decrypt"),
        bytes.subarray(12),
      );
      expect(JSON.parse(new TextDecoder().decode(plain))).toEqual(["a", 2]);
    }
  });

  test("opens nothing under another secret or label, altered, or too short to hold a tag", async () => {
    const text = await sealUnder(LABEL, SECRET, { a: 1 });
    expect(await unsealUnder(LABEL, `${SECRET}!`, text)).toBeNull();
    expect(await unsealUnder("svc/other\0", SECRET, text)).toBeNull();
    const bytes = Buffer.from(text, "base64url");
    bytes[bytes.length - 1]! ^= 1;
    expect(await unsealUnder(LABEL, SECRET, bytes.toString("base64url"))).toBeNull();
    expect(await unsealUnder(LABEL, SECRET, text.slice(0, 20))).toBeNull();
    expect(await unsealUnder(LABEL, SECRET, "")).toBeNull();
  });
});
