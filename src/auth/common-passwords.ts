// Refuses passwords found in breach corpora (NIST SP 800-63B 5.1.1.2): zxcvbn-ts's list of 49,233
// common passwords, bundled into the binary and loaded on first use so start-up does not pay for it.
import { normalizePassword } from "./passwords.ts";

let common: Promise<Set<string>> | undefined;

function load(): Promise<Set<string>> {
  common ??= import("@zxcvbn-ts/language-common").then(
    ({ dictionary }) => new Set(dictionary["passwords-common"].map((p) => p.toLowerCase())),
  );
  return common;
}

/** True when the password, ignoring case, is on the list. */
export async function isCommonPassword(password: string): Promise<boolean> {
  return (await load()).has(normalizePassword(password).toLowerCase());
}
