// The console's lists, read a page at a time as svc pages them: each answer's Link header names the next page,
// and the pages walked through are kept, to go back; a new search starts from its first page again.
import { useEffect, useState } from "preact/hooks";
import { request } from "./api.ts";
import { type Action, useLatest } from "./parts.tsx";
import { unlessTurnedOff } from "./turned-off.ts";

/** Moving through a list's pages, as the pager's two buttons do. */
export interface Turning {
  /** Whether there is a page to go back to. */
  canGoBack: boolean;
  back(): void;
  /** The next page's URL; null on the last page. */
  next: string | null;
  forth(next: string): void;
}

/**
 * A list's page, read through `action` (which shows its error and busy state) from `url(at)`, afresh each time
 * `at` changes; `load` reads one again. With `offCode`, svc's answer that the feature is turned off is kept as
 * `off` (its detail), not shown as an error. Only the latest read's answer (or failure) is shown: one asked for
 * earlier may arrive later (a search typed on). And until it is shown, there is no next page: the one shown is
 * of the list being replaced, or of the filters before a search read afresh.
 */
export function useListPage<Row, At>(
  action: Action,
  at: At,
  url: (at: At) => string | Promise<string>,
  offCode?: string,
) {
  const [shown, setShown] = useState<{ at: At; asked: number; rows: Row[]; next: string | null } | null>(null);
  const [asked, setAsked] = useState(0);
  const [off, setOff] = useState<string | null>(null);
  const only = useLatest();
  const load = (target: At) =>
    action.run(() =>
      only(async (read) => {
        setAsked(read.asked);
        const page = async () => {
          const answer = await request<Row[]>("GET", await url(target));
          if (read.latest()) setShown({ at: target, asked: read.asked, rows: answer.body, next: answer.next });
        };
        if (offCode === undefined) return page();
        const detail = await unlessTurnedOff(offCode, page);
        if (read.latest()) setOff(detail);
      }),
    );
  useEffect(() => {
    void load(at);
  }, [at]);
  const current = shown !== null && Object.is(shown.at, at) && shown.asked === asked;
  return { rows: shown?.rows ?? [], next: current ? shown.next : null, off, load };
}

/**
 * A list paged forwards by the Link header and back through the pages walked: `first` is read until the first
 * search (restart) or turn of a page.
 */
export function usePagedList<Row>(action: Action, first: string, offCode?: string) {
  /** The pages walked through, the one shown last; none yet: `first`. */
  const [pages, setPages] = useState<string[]>([]);
  const current = pages.at(-1) ?? first;
  const page = useListPage<Row, string>(action, current, (url) => url, offCode);
  const turning: Turning = {
    canGoBack: pages.length > 1,
    back: () => setPages(pages.slice(0, -1)),
    next: page.next,
    forth: (next) => setPages([...(pages.length ? pages : [current]), next]),
  };
  return { ...page, current, turning, restart: (url: string) => setPages([url]) };
}

/** The two buttons that turn a list's pages. */
export function Pager({
  label,
  back,
  forth,
  turning,
}: {
  label: string;
  back: string;
  forth: string;
  turning: Turning;
}) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={!turning.canGoBack} onClick={turning.back}>
        {back}
      </button>
      <button type="button" disabled={!turning.next} onClick={() => turning.next && turning.forth(turning.next)}>
        {forth}
      </button>
    </nav>
  );
}
