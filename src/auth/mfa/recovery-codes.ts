// Recovery codes: ten one-time codes shown once when a second factor is turned on (or renewed), for the
// day the phone is lost. Each is 60 random bits in RFC 4648's base32, written `xxxx-xxxx-xxxx` and read
// back forgivingly (any case, with or without dashes and spaces). Stored only as SHA-256 digests.

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const LENGTH = 12;

/** One new code, `xxxx-xxxx-xxxx`. */
function newRecoveryCode(): string {
  // 32 symbols divide 256: a byte's low five bits are uniform over the alphabet.
  const bytes = crypto.getRandomValues(new Uint8Array(LENGTH));
  const code = Array.from(bytes, (byte) => ALPHABET[byte & 31]).join("");
  return code.match(/.{4}/g)!.join("-");
}

/** Ten new codes, all different. */
export function newRecoveryCodes(): string[] {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) codes.add(newRecoveryCode());
  return [...codes];
}

/** The code in its one canonical spelling, or null when the text cannot be a code svc issued. */
export function canonicalRecoveryCode(text: string): string | null {
  const code = text.replace(/[\s-]/g, "").toLowerCase();
  if (code.length !== LENGTH) return null;
  for (const c of code) if (!ALPHABET.includes(c)) return null;
  return code;
}

/** What the database keeps of a code (canonical), and looks it up by. */
export function recoveryDigest(canonical: string): string {
  return new Bun.CryptoHasher("sha256").update(`recovery:${canonical}`).digest("base64url");
}
