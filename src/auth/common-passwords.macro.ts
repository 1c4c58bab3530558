// Runs at bundle time (imported `with { type: "macro" }`): zxcvbn-ts's list of common passwords,
// lower-cased, without repeats, sorted and joined by line breaks, inlined as one string literal.
import { dictionary } from "@zxcvbn-ts/language-common";

export function commonPasswordLines(): string {
  return [...new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()))].sort().join("\n");
}
