// A list svc answers a page at a time, as the client hands it on: every item, or each page, asked for only
// when a loop reaches it.

/** Every item, page by page: `for await (const item of list)` walks them all; `.pages()` gives each page. */
export interface Paged<T> extends AsyncIterable<T> {
  pages(): AsyncIterable<T[]>;
}

/** The list whose pages `pages` yields, walked either way. */
export function pagedOver<T>(pages: () => AsyncIterable<T[]>): Paged<T> {
  return {
    pages,
    async *[Symbol.asyncIterator]() {
      for await (const page of pages()) yield* page;
    },
  };
}
