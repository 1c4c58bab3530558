// GET users/all's answer: a page of users in id order, read forwards (from the start, or after an id) or
// backwards (before an id); a Link header to the pages beside it and to the first one; with ?count=true the
// number of users in X-Total-Count. Everything it reads comes through the store's cache, so a page asked
// for again while the users table is unchanged is answered in one synchronous call.
import { type Awaitable, chain } from "../lib/awaitable.ts";
import type { UserRecord } from "../db/store.ts";
import { type AnswerSet, conditionalJson } from "../http/etag.ts";
import type { PageJson } from "./page-json.ts";
import { parseUserList } from "./paging.ts";
import type { UserService } from "./service.ts";

/** Where the pages are, for the links between them. */
export const USER_LIST_PATH = "/svc-api/v1/users/all";

type Query = Record<string, string | undefined>;

/** The rows shown, and whether users lie before and after them. */
interface Slice {
  rows: UserRecord[];
  shown: number;
  before: boolean;
  after: boolean;
}

export function userListPage(users: Pick<UserService, "list" | "count">, pageJson: PageJson) {
  /** Whether any user sorts before (or after) this id: one row read, kept by the cache as pages are. */
  const anyBefore = (id: string) => chain(users.list({ limit: 1, before: id }), (rows) => rows.length > 0);
  const anyAfter = (id: string) => chain(users.list({ limit: 1, after: id }), (rows) => rows.length > 0);

  /** The page asked for, and what lies on either side of it. */
  function slice(query: ReturnType<typeof parseUserList>["page"]): Awaitable<Slice> {
    if ("before" in query) {
      return chain(users.list(query), (rows) => {
        if (rows.length === 0) return { rows, shown: 0, before: false, after: false };
        return chain(anyBefore(rows[0]!.id), (before) =>
          chain(anyAfter(rows.at(-1)!.id), (after) => ({ rows, shown: rows.length, before, after })),
        );
      });
    }
    // One extra row tells whether another page follows without a count query.
    return chain(users.list({ ...query, limit: query.limit + 1 }), (rows) => {
      const shown = Math.min(rows.length, query.limit);
      const after = rows.length > query.limit;
      if (query.after === undefined || shown === 0) return { rows, shown, before: false, after };
      return chain(anyBefore(rows[0]!.id), (before) => ({ rows, shown, before, after }));
    });
  }

  /** The page's JSON (or an empty 304): at once when the page is kept in memory. */
  return (request: Request, query: Query, caller: UserRecord, set: AnswerSet): Awaitable<string> => {
    const { page, count } = parseUserList(query);
    return chain(slice(page), ({ rows, shown, before, after }) => {
      const cursor = "before" in page || page.after !== undefined;
      const link = linkHeader(page.limit, count, {
        next: after ? rows[shown - 1]!.id : null,
        prev: before ? rows[0]!.id : null,
        first: cursor,
      });
      if (link) set.headers.link = link;
      // A string, not a Response: Elysia would copy a Response to add svc's headers, body as a stream.
      const json = pageJson(rows, shown, caller.id);
      if (!count) return conditionalJson(request, set, json);
      return chain(users.count(), (total) => {
        set.headers["x-total-count"] = String(total);
        return conditionalJson(request, set, json, `t${total.toString(36)}`);
      });
    });
  };
}

/** The Link header: next (after the page's last user), prev (before its first), first; null when none applies. */
function linkHeader(
  limit: number,
  count: boolean,
  { next, prev, first }: { next: string | null; prev: string | null; first: boolean },
): string | null {
  const url = (cursor: string) => `<${USER_LIST_PATH}?limit=${limit}${cursor}${count ? "&count=true" : ""}>`;
  const links: string[] = [];
  if (next !== null) links.push(`${url(`&after=${next}`)}; rel="next"`);
  if (prev !== null) links.push(`${url(`&before=${prev}`)}; rel="prev"`);
  if (first) links.push(`${url("")}; rel="first"`);
  return links.length > 0 ? links.join(", ") : null;
}
