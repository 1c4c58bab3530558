// A page of the user list: how many, and after which id, read from a query string.
import type { UserPage } from "../db/store.ts";
import { invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 1000;

const PAGE_PARAMETERS = new Set(["limit", "after"]);

/** Reads `limit` and `after` from a query string: limit 1-1000 (default 100), after a user id; nothing else. */
export function parsePage(query: Record<string, string | undefined>): UserPage {
  let unknown: string[] | undefined;
  for (const name in query) if (!PAGE_PARAMETERS.has(name)) (unknown ??= []).push(name);
  if (unknown) throw invalidFields(unknown.map((field) => ({ field, message: UNKNOWN_FIELD })));
  const { limit, after } = query;
  const problems: FieldError[] = [];
  let size = PAGE_DEFAULT;
  if (limit !== undefined) {
    size = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(size >= 1 && size <= PAGE_MAX))
      problems.push({ field: "limit", message: `must be an integer from 1 to ${PAGE_MAX}` });
  }
  const afterId = after === undefined ? undefined : parseId(after);
  if (afterId === null) problems.push({ field: "after", message: "must be a user id" });
  if (problems.length > 0 || afterId === null) throw invalidFields(problems);
  return afterId === undefined ? { limit: size } : { limit: size, after: afterId };
}
