// The admin routes' lists (users, invitations, audit, mail), each a walk over its pages by their
// `Link: rel="next"`: a page is asked for only when the walk reaches it, each with the session's token.
import type { Auth } from "./auth.js";
import { answerOf, type Call, nextLink } from "./http.js";
import { type Paged, pagedOver } from "./paged.js";

export type { Paged } from "./paged.js";

export type Query = NonNullable<Call["query"]>;

/** The list at `path` with `query` (its filters and page size); a next page on another origin is never asked for. */
export function paged<T>(auth: Auth, path: string, query: Query = {}): Paged<T> {
  const pages = async function* (): AsyncGenerator<T[]> {
    // Http.send refuses a URL on another origin than svc's: the token never goes there.
    let call: Call | null = { method: "GET", path, query };
    while (call !== null) {
      const response = await auth.authorized(call);
      const page = await answerOf<T[]>(response);
      const next = nextLink(response.headers.get("link"));
      call = next === null ? null : { method: "GET", path: next };
      yield page;
    }
  };
  return pagedOver(pages);
}
