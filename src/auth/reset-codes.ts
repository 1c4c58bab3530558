// Password reset codes: 160 random bits an operator reads out or pastes to a user, so they are written
// in Crockford's base32 (no I, L, O or U to misread) in groups of four, and read back forgivingly:
// any case, with or without the dashes and spaces, I and L as 1, O as 0. Stored only as a digest.

const CODE_BYTES = 20;
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** 160 bits in base32: 32 characters. */
const CODE_LENGTH = 32;

export function newResetCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(CODE_BYTES));
  let bits = 0;
  let value = 0;
  let code = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      code += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return code.match(/.{4}/g)!.join("-");
}

/** The code in its one canonical spelling, or null when the text cannot be a code svc issued. */
export function canonicalResetCode(text: string): string | null {
  const code = text.replace(/[\s-]/g, "").toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
  if (code.length !== CODE_LENGTH) return null;
  for (const c of code) if (!ALPHABET.includes(c)) return null;
  return code;
}

/** What the database keeps of a code (canonical), and looks it up by. */
export function resetDigest(canonical: string): string {
  return new Bun.CryptoHasher("sha256").update(canonical).digest("base64url");
}
