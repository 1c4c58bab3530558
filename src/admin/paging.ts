// The admin lists' keyset pages (accounts, the audit log, invitations, the mail outbox): one row more than
// the page is read, which tells whether another page exists without a count query, and the Link header's
// next page keeps the query's filters.

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

export interface PageRequest {
  /** The list's path, which the Link header points at. */
  path: string;
  query: Record<string, string | undefined>;
  limit: number;
  /** The query parameter the next page starts from. */
  cursor?: "after" | "before";
}

/** At most `limit` rows, read by `read`; with a Link header to the next page in `headers` when there is one. */
export async function keysetPage<Row extends { id: string }>(
  read: (limit: number) => Promise<Row[]>,
  { path, query, limit, cursor = "after" }: PageRequest,
  headers: Record<string, unknown>,
): Promise<Row[]> {
  const rows = await read(limit + 1);
  const page = rows.slice(0, limit);
  if (rows.length > limit)
    headers.link = `<${path}?${nextPageQuery(query, limit, page.at(-1)!.id, cursor)}>; rel="next"`;
  return page;
}
