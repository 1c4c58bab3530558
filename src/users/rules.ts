// The rules a username, e-mail address and password must meet, as per-field errors.
import type { FieldError } from "../errors/index.ts";
import { PASSWORD_MAX, PASSWORD_MIN, passwordLength } from "../auth/passwords.ts";
import { isCommonPassword } from "../auth/common-passwords.ts";
import { unstorable, UNSTORABLE_MESSAGE } from "../lib/text.ts";

export const USERNAME = /^[A-Za-z0-9_.-]{3,32}$/;
export const USERNAME_MESSAGE = "must be 3-32 characters of letters, digits, _ . -";
// One @, something before it, and a domain with a dot that neither starts nor ends it; no spaces.
export const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
export const EMAIL_MAX = 254;
export const EMAIL_MESSAGE = "must be an e-mail address such as ann@example.com";
export const PASSWORD_MESSAGE = `must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`;

export function usernameProblem(username: string): string | null {
  return USERNAME.test(username) ? null : USERNAME_MESSAGE;
}

export function emailProblem(email: string): string | null {
  if (email.length > EMAIL_MAX) return `must be at most ${EMAIL_MAX} characters`;
  if (unstorable(email)) return UNSTORABLE_MESSAGE;
  return EMAIL.test(email) ? null : EMAIL_MESSAGE;
}

export function passwordProblem(password: string): string | null {
  if (unstorable(password)) return UNSTORABLE_MESSAGE;
  const length = passwordLength(password);
  return length >= PASSWORD_MIN && length <= PASSWORD_MAX ? null : PASSWORD_MESSAGE;
}

/** Collects the problems of every field given, so a client learns all of them at once. */
export function fieldProblems(
  checks: Array<[field: string, value: string | undefined, rule: (v: string) => string | null]>,
): FieldError[] {
  const problems: FieldError[] = [];
  for (const [field, value, rule] of checks) {
    const message = value === undefined ? null : rule(value);
    if (message) problems.push({ field, message });
  }
  return problems;
}

/** The rules' problems, plus a common password; the list is only consulted for an otherwise valid one. */
export async function newPasswordProblems(field: string, password: string): Promise<FieldError[]> {
  const problems = fieldProblems([[field, password, passwordProblem]]);
  if (problems.length === 0 && (await isCommonPassword(password))) {
    problems.push({ field, message: "is too common: it appears in lists of breached passwords" });
  }
  return problems;
}
