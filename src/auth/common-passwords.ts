// Refuses passwords found in breach corpora (NIST SP 800-63B 5.1.1.2): zxcvbn-ts's list of 49,233
// common passwords, bundled into the binary and loaded on first use so start-up does not pay for it.
//
// The list is kept as one sorted string (the build makes it: common-passwords.macro.ts) and searched
// by bisection, about 16 steps: one string holds a small part of the heap that 49,000 strings in an
// array and a Set (zxcvbn-ts's own dictionary) did.
import { normalizePassword } from "./passwords.ts";

let lines: Promise<string> | undefined;

/** True when the password, ignoring case, is on the list. */
export async function isCommonPassword(password: string): Promise<boolean> {
  lines ??= import("./common-password-list.ts").then((m) => m.COMMON_PASSWORD_LINES);
  return isOnSortedLines(await lines, normalizePassword(password).toLowerCase());
}

/** Whether `word` is one of the lines of `text`: sorted, with a line break before the first and after the last. */
export function isOnSortedLines(text: string, word: string): boolean {
  if (word.includes("\n")) return false;
  // [lo, hi): whole lines; lo is where one starts, hi the line break after the last.
  let lo = 1;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const start = text.lastIndexOf("\n", mid - 1) + 1;
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end);
    if (line === word) return true;
    if (line < word) lo = end + 1;
    else hi = start - 1;
  }
  return false;
}
