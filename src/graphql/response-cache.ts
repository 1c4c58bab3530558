// Whole answers to read-only GraphQL requests, reused while the tables they were read from are
// unchanged. Yoga's pipeline (request parsing, envelop's hooks, execution, result processing) costs
// about 50 µs per request even with graphql-jit; a repeated query, the common case for a category
// list, is answered from here in a few.
//
// Right across instances as VersionedCache is: an answer carries the table versions read before Yoga
// ran, and is used only while the database still reports exactly those. Only a query that finished
// without a single error is kept, and the key holds the caller, so no one is ever shown an answer
// computed for somebody else, even should a later field depend on the viewer.
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { TableVersions } from "../db/store.ts";
import type { OperationLabel } from "./operation-metrics.ts";

export interface CachedAnswer {
  body: string;
  contentType: string;
  /** The operation's metrics label, counted again on every hit. */
  operation: string;
  versions: TableVersions;
}

/** Past this a body is not worth keeping: answers this large are rare and would crowd out the rest. */
const MAX_KEY_CHARS = 16 * 1024;

export class ResponseCache {
  private readonly entries = new Map<string, CachedAnswer>();
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

  /**
   * The key for a request, or null when it cannot be cached: the caller, the headers Yoga's answer
   * depends on (Accept, Content-Type) and the request's text. A body
   * naming `mutation` is skipped without reading the database (a query that merely mentions the word
   * is executed each time, which is only slower).
   */
  key(viewerId: string | null, headers: Headers, body: string): string | null {
    if (body.length > MAX_KEY_CHARS || body.includes("mutation")) return null;
    return `${viewerId ?? ""}\n${headers.get("accept") ?? ""}\n${headers.get("content-type") ?? ""}\n${body}`;
  }

  get(key: string, versions: TableVersions): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.versions.users === versions.users && entry.versions.categories === versions.categories) return entry;
    this.remove(key, entry);
    return undefined;
  }

  set(key: string, answer: CachedAnswer): void {
    const size = key.length + answer.body.length;
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

  private remove(key: string, entry: CachedAnswer): void {
    this.entries.delete(key);
    this.chars -= key.length + entry.body.length;
  }
}

/** A request on its way through Yoga whose answer may be kept. */
export interface PendingAnswer {
  key: string;
  versions: TableVersions;
  /** Set once Yoga has executed a query without errors: the answer may be kept under this label. */
  operation?: string;
}

/** Marks a pending request's answer as worth keeping: a query (never a mutation) with no errors. */
export function cacheableAnswers(pending: WeakMap<Request, PendingAnswer>, label: OperationLabel): Plugin {
  return {
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      const answer = request && pending.get(request);
      if (!answer) return;
      if (getOperationAST(args.document, args.operationName)?.operation !== "query") return;
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || (result.errors?.length ?? 0) > 0) return;
          answer.operation = label(args.document, args.operationName);
        },
      };
    },
  };
}
