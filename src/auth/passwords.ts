// Password hashing with argon2id through Bun.password, and the rules a password must meet.
import type { PasswordCost } from "../config/index.ts";
import { NO_PASSWORD } from "../db/records.ts";

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
  /** Does the work of one verify against no account, so a missing user costs what a wrong password does. */
  verifyNothing(password: string): Promise<false>;
}

/** NFKC so that one password typed on two keyboards is one password (NIST SP 800-63B 5.1.1.2). */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/** Length in characters (code points), which is what a person counts. */
export function passwordLength(password: string): number {
  let count = 0;
  for (const _ of normalizePassword(password)) count++;
  return count;
}

export function createPasswordHasher(cost: PasswordCost): PasswordHasher {
  const options = { algorithm: "argon2id", ...cost } as const;
  // Hashed in the background at start so the first unknown-user login is not the slow one.
  const decoy = Bun.password.hash(crypto.randomUUID(), options);
  async function verifyNothing(password: string): Promise<false> {
    await Bun.password.verify(normalizePassword(password), await decoy, "argon2id");
    return false;
  }

  return {
    hash: (password) => Bun.password.hash(normalizePassword(password), options),
    async verify(password, hash) {
      // An account without a password (made by a provider's sign-in) costs what a wrong password does.
      if (hash === NO_PASSWORD) return verifyNothing(password);
      return Bun.password.verify(normalizePassword(password), hash, "argon2id");
    },
    verifyNothing,
  };
}
