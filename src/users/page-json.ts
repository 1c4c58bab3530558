// A page of users as JSON, rendered once per page. The store's cache layer hands out the same array
// while the users table is unchanged and a new one after any write, so a WeakMap keyed by the array
// follows it. A caller on the page sees their own record with the e-mail: that variant is spliced in
// once and kept per caller (the latest page each fetched), so a repeated request builds no string.
import { setBounded } from "../lib/bounded-map.ts";
import type { UserRecord } from "../db/store.ts";
import { userView } from "./model.ts";

/** The first `count` rows as the JSON array `viewerId` is shown. */
export type PageJson = (rows: UserRecord[], count: number, viewerId: string) => string;

interface RenderedPage {
  count: number;
  json: string;
  /** Where user i's JSON lies in `json`: from bounds[2i] to bounds[2i + 1]. */
  bounds: number[];
}

/**
 * How many callers' own variants are kept: a page of 100 users is about 20 KB, so about 1.3 MB;
 * 13 MB at most, were every one a page of 1,000 (the largest limit).
 */
const OWN_VARIANTS = 64;

export function createPageJson(): PageJson {
  const rendered = new WeakMap<UserRecord[], RenderedPage>();
  const ownVariants = new Map<string, { page: RenderedPage; json: string }>();

  return (rows, count, viewerId) => {
    let page = rendered.get(rows);
    if (page?.count !== count) {
      page = render(rows, count);
      rendered.set(rows, page);
    }
    const cached = ownVariants.get(viewerId);
    if (cached?.page === page) return cached.json;
    for (let i = 0; i < count; i++) {
      if (rows[i]!.id !== viewerId) continue;
      const own = JSON.stringify(userView(rows[i]!, viewerId));
      const json = page.json.slice(0, page.bounds[2 * i]) + own + page.json.slice(page.bounds[2 * i + 1]);
      setBounded(ownVariants, viewerId, { page, json }, OWN_VARIANTS);
      return json;
    }
    return page.json;
  };
}

function render(rows: UserRecord[], count: number): RenderedPage {
  const bounds: number[] = [];
  let json = "[";
  for (let i = 0; i < count; i++) {
    if (i > 0) json += ",";
    bounds.push(json.length);
    json += JSON.stringify(userView(rows[i]!, null));
    bounds.push(json.length);
  }
  return { count, json: `${json}]`, bounds };
}
