// Every cache that GraphQL requests fill, bounded by entries and by size. Which documents arrive is the
// client's choice, so a cache without a bound grows with every distinct one (bench/results.md, "Figures behind the code" has
// what these bounds were measured against).
import type { DocumentNode } from "graphql";
import { LRUCache } from "lru-cache";

export const CACHE_BOUNDS = {
  /**
   * Parsed documents (Yoga's parser cache) and parse errors: entries, and characters of their source.
   * A parsed document keeps its whole token list (for error locations), many times its source's size, so
   * a burst of one-off documents would otherwise stay in memory. Clients send far fewer distinct
   * operations than this; a document past it is parsed and validated again.
   *
   * Kept from its second arrival (see `seen`): a one-off document (a mutation with its values inline)
   * is then never kept at all.
   */
  documents: { entries: 250, chars: 2 * 1024 * 1024 },
  /** Sources seen once: a document is kept (documents) when it comes again while still listed here. */
  seen: { entries: 1000, chars: 1024 * 1024 },
  parseErrors: { entries: 500, chars: 512 * 1024 },
} as const;

/** An LRU keyed by document source, sized by the source's length (what a parsed document grows with). */
function bySource<V extends {}>(bound: { entries: number; chars: number }): LRUCache<string, V> {
  return new LRUCache<string, V>({
    max: bound.entries,
    maxSize: bound.chars,
    sizeCalculation: (_, key) => Math.max(1, key.length),
  });
}

export type GraphqlCaches = ReturnType<typeof graphqlCaches>;

export function graphqlCaches() {
  const documents = bySource<DocumentNode>(CACHE_BOUNDS.documents);
  const seen = bySource<true>(CACHE_BOUNDS.seen);
  const parseErrors = bySource<Error>(CACHE_BOUNDS.parseErrors);

  return {
    /** Yoga's `parserAndValidationCache` (validation results hang off the documents kept here). */
    parser: { documentCache: onRepeat(documents, seen), errorCache: parseErrors, validationCache: true },
    sizes: (): Record<keyof typeof CACHE_BOUNDS, number> => ({
      documents: documents.size,
      seen: seen.size,
      parseErrors: parseErrors.size,
    }),
  };
}

/**
 * A cache that keeps an entry only when its key comes a second time while remembered in `seen`: what
 * clients send again (their operations) is kept, and a burst of one-off documents (values written
 * into each) holds a key each, not a parsed document each.
 */
function onRepeat<V extends {}>(cache: LRUCache<string, V>, seen: LRUCache<string, true>) {
  return {
    get: (key: string) => cache.get(key),
    set(key: string, value: V) {
      if (seen.delete(key)) cache.set(key, value);
      else seen.set(key, true);
    },
  };
}
