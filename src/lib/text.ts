// What no text field may hold, whatever the database: U+0000 (PostgreSQL cannot store it, so a row
// SQLite took would block a later copy) and a UTF-16 surrogate without its pair (it has no UTF-8 form:
// two different ones would be stored, and hashed, as the same U+FFFD).

export const UNSTORABLE_MESSAGE = "must not contain U+0000 or an unpaired UTF-16 surrogate";

/** True when the text cannot be stored as it was sent. */
export function unstorable(text: string): boolean {
  return text.includes("\u0000") || !text.isWellFormed();
}

/** The path ("email", "items.0.name") of the first string value inside `value` that cannot be stored; null when none. */
export function firstUnstorable(value: unknown, path = ""): string | null {
  if (typeof value === "string") return unstorable(value) ? path || "body" : null;
  if (value === null || typeof value !== "object") return null;
  for (const [key, child] of Object.entries(value)) {
    const found = firstUnstorable(child, path ? `${path}.${key}` : key);
    if (found !== null) return found;
  }
  return null;
}
