// A page of a list read from a query string: how many, and after which id; for the user list also
// before which id (walking back), and whether the total is wanted.
import type { UserPage, UserPageBefore } from "../db/store.ts";
import { invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 1000;

const PAGE_PARAMETERS = new Set(["limit", "after"]);
const USER_LIST_PARAMETERS = new Set(["limit", "after", "before", "count"]);

/** What GET users/all asks for: a page either way, and with `count`, the number of users too. */
export interface UserListQuery {
  page: UserPage | UserPageBefore;
  count: boolean;
}

type Query = Record<string, string | undefined>;

/** Reads `limit` and `after` from a query string: limit 1-1000 (default 100), after a user id; nothing else. */
export function parsePage(query: Query): UserPage {
  rejectUnknown(query, PAGE_PARAMETERS);
  const problems: FieldError[] = [];
  const limit = limitIn(query, problems);
  const after = idIn(query, "after", problems);
  if (problems.length > 0) throw invalidFields(problems);
  return after === undefined ? { limit } : { limit, after };
}

/**
 * GET users/all's query: `limit` and `after` as parsePage reads them, or `before` (a user id) instead of
 * `after`, and `count` (true or false).
 */
export function parseUserList(query: Query): UserListQuery {
  rejectUnknown(query, USER_LIST_PARAMETERS);
  const problems: FieldError[] = [];
  const limit = limitIn(query, problems);
  const after = idIn(query, "after", problems);
  const before = idIn(query, "before", problems);
  if (query.after !== undefined && query.before !== undefined)
    problems.push({
      field: "before",
      message: "cannot be given with after: a page is either after an id or before one",
    });
  const { count } = query;
  if (count !== undefined && count !== "true" && count !== "false")
    problems.push({ field: "count", message: "must be true or false" });
  if (problems.length > 0) throw invalidFields(problems);
  const page = before !== undefined ? { limit, before } : after !== undefined ? { limit, after } : { limit };
  return { page, count: count === "true" };
}

/** Throws naming every parameter not in `known`: a query with one is refused for that alone. */
function rejectUnknown(query: Query, known: Set<string>): void {
  let unknown: FieldError[] | undefined;
  for (const name in query) if (!known.has(name)) (unknown ??= []).push({ field: name, message: UNKNOWN_FIELD });
  if (unknown) throw invalidFields(unknown);
}

function limitIn({ limit }: Query, problems: FieldError[]): number {
  if (limit === undefined) return PAGE_DEFAULT;
  const size = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
  if (!(size >= 1 && size <= PAGE_MAX))
    problems.push({ field: "limit", message: `must be an integer from 1 to ${PAGE_MAX}` });
  return size;
}

/** The id given as `name`, canonical; undefined when not given (or, with a problem noted, not an id). */
function idIn(query: Query, name: "after" | "before", problems: FieldError[]): string | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  const id = parseId(text);
  if (id === null) problems.push({ field: name, message: "must be a user id" });
  return id ?? undefined;
}
