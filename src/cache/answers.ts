// Whole answers (GraphQL's, for a repeated query), each kept with the table versions read before it
// was computed and given out only while the database still reports exactly those: right across
// instances, like every cache in this layer. Bounded by entries and by characters; oldest out first.
import type { TableVersions } from "../db/store.ts";

export interface Answer {
  body: string;
  contentType: string;
  /** The operation's metrics label, counted again on every hit. */
  operation: string;
}

export interface VersionedAnswer extends Answer {
  versions: TableVersions;
}

export class AnswerCache {
  private readonly entries = new Map<string, VersionedAnswer>();
  private chars = 0;

  /**
   * @param maxChars what all keys and answers together may hold, in UTF-16 code units.
   * @param maxEntries how many answers at most: small answers cost more than their characters.
   */
  constructor(
    private readonly maxChars: number,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, versions: TableVersions): VersionedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.versions.users === versions.users && entry.versions.categories === versions.categories) return entry;
    this.remove(key, entry);
    return undefined;
  }

  set(key: string, answer: VersionedAnswer): void {
    const size = key.length + answer.body.length;
    // Past a quarter of the budget an answer would crowd out the rest.
    if (size > this.maxChars / 4) return;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    // Oldest first: Map keeps insertion order.
    for (const [oldest, entry] of this.entries) {
      if (this.chars + size <= this.maxChars && this.entries.size < this.maxEntries) break;
      this.remove(oldest, entry);
    }
    this.entries.set(key, answer);
    this.chars += size;
  }

  private remove(key: string, entry: VersionedAnswer): void {
    this.entries.delete(key);
    this.chars -= key.length + entry.body.length;
  }
}
