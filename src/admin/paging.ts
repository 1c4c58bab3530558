// The admin lists' keyset pages (accounts, the audit log, invitations, the mail outbox): one row more than
// the page is read, which tells whether another page exists without a count query, and the Link header's
// next page keeps the query's filters.
import { type AnswerSet, conditionalJson } from "../http/etag.ts";

/** The query string of the next page: the same filters, `cursor` the last item of this one. */
export function nextPageQuery(
  query: Record<string, string | undefined>,
  limit: number,
  last: string,
  cursor: "after" | "before" = "after",
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && name !== cursor && name !== "limit") params.set(name, value);
  }
  params.set("limit", String(limit));
  params.set(cursor, last);
  return params.toString();
}

/** What a list route is given: the request, the answer's status and headers, and the query string. */
export interface ListRequest {
  request: Request;
  set: AnswerSet;
  query: Record<string, string | undefined>;
}

export interface PageOf {
  /** The list's path, which the Link header points at. */
  path: string;
  limit: number;
  /** The query parameter the next page starts from. */
  cursor?: "after" | "before";
}

/**
 * A list's answer: at most `limit` rows read by `read`, each shown by `view`, as conditional JSON (ETag,
 * 304), with a Link header to the next page when there is one.
 */
export async function listAnswer<Row extends { id: string }>(
  { request, set, query }: ListRequest,
  { path, limit, cursor = "after" }: PageOf,
  read: (limit: number) => Promise<Row[]>,
  view: (row: Row) => unknown,
): Promise<string> {
  const rows = await read(limit + 1);
  const page = rows.slice(0, limit);
  if (rows.length > limit)
    set.headers.link = `<${path}?${nextPageQuery(query, limit, page.at(-1)!.id, cursor)}>; rel="next"`;
  return conditionalJson(request, set, page.map(view));
}
