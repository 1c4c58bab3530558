// The category operations ready-made, and the subscription to their changes that resumes by cursor.
import type { Auth } from "./auth.js";
import { graphqlError, type GraphQLErrorEntry, problemError, SvcError } from "./errors.js";
import type { Http } from "./http.js";
import { runGraphQL } from "./graphql.js";
import type {
  Category,
  CategoryConnection,
  CategoryEvent as CategoryEventType,
  CategoryOrder,
  CreateCategoryInput,
  PageInfo,
  QueryCategoriesConnectionArgs,
  UpdateCategoryInput,
} from "./schema.generated.js";
import { serverSentEvents } from "./sse.js";

export type { Category, CategoryConnection, CategoryOrder, CreateCategoryInput, PageInfo, UpdateCategoryInput };
/** categoriesConnection's arguments: each may be left out. */
export type CategoryConnectionArgs = Partial<QueryCategoriesConnectionArgs>;
export type CategoryEvent = CategoryEventType;

const FIELDS = "id name description colorHex icon createdBy createdAt updatedAt version";
const CATEGORY = `fragment Category on Category { ${FIELDS} }`;

export interface SubscribeOptions {
  /** The cursor of the last event you handled: events after it come first, then the live ones. */
  after?: string | null;
  /**
   * Called when the subscription cannot go on and stops: the session is over (no token to renew), or svc
   * refused the subscription itself (a cursor that is no cursor). Network failures are retried, not reported.
   */
  onError?: (error: SvcError) => void;
  /**
   * Called each time a stream opens: from then on every change reaches it. `fresh` is true when it opened
   * without a cursor (no event received yet, and no `after` given): changes before it are not sent, so read
   * the list then (every time it says fresh), not before subscribing, and no change falls between the two.
   */
  onOpen?: (info: { fresh: boolean }) => void;
}

/** The first wait before subscribing again after a failure, doubled with each one in a row, up to the longest. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 15_000;

export class Categories {
  readonly #http: Http;
  readonly #auth: Auth;

  constructor(http: Http, auth: Auth) {
    this.#http = http;
    this.#auth = auth;
  }

  /** Categories by name; `first` (1-1000) at most, `after` a category's id (the last of the previous page). */
  async list(page: { first?: number; after?: string } = {}): Promise<Category[]> {
    const query = `query ($first: Int, $after: ID) { categories(first: $first, after: $after) { ...Category } } ${CATEGORY}`;
    return (await runGraphQL<{ categories: Category[] }>(this.#auth, query, page)).categories;
  }

  /**
   * A page of the categories connection (Relay's): forwards with `first` and `after` (a page's
   * `pageInfo.endCursor`), backwards with `last` and `before` (its `startCursor`); `search` in the names,
   * without regard to case; `orderBy` a field (NAME, CREATED_AT, UPDATED_AT) and a direction (ASC, DESC).
   */
  async connection(args: CategoryConnectionArgs = {}): Promise<CategoryConnection> {
    const query = `query ($first: Int, $after: String, $last: Int, $before: String, $search: String, $orderBy: CategoryOrder) { categoriesConnection(first: $first, after: $after, last: $last, before: $before, search: $search, orderBy: $orderBy) { edges { cursor node { ...Category } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } } ${CATEGORY}`;
    return (await runGraphQL<{ categoriesConnection: CategoryConnection }>(this.#auth, query, args))
      .categoriesConnection;
  }

  /** One category, or null when none has this id. */
  async get(id: string): Promise<Category | null> {
    const query = `query ($id: ID!) { category(id: $id) { ...Category } } ${CATEGORY}`;
    return (await runGraphQL<{ category: Category | null }>(this.#auth, query, { id })).category;
  }

  async create(input: CreateCategoryInput): Promise<Category> {
    const query = `mutation ($input: CreateCategoryInput!) { createCategory(input: $input) { ...Category } } ${CATEGORY}`;
    return (await runGraphQL<{ createCategory: Category }>(this.#auth, query, { input })).createCategory;
  }

  /** With `ifVersion`, only while the category is at that version (else SvcError version_mismatch, with currentVersion). */
  async update(id: string, input: UpdateCategoryInput, options: { ifVersion?: number } = {}): Promise<Category> {
    const query = `mutation ($id: ID!, $input: UpdateCategoryInput!, $ifVersion: Int) { updateCategory(id: $id, input: $input, ifVersion: $ifVersion) { ...Category } } ${CATEGORY}`;
    const variables = { id, input, ifVersion: options.ifVersion };
    return (await runGraphQL<{ updateCategory: Category }>(this.#auth, query, variables)).updateCategory;
  }

  async delete(id: string, options: { ifVersion?: number } = {}): Promise<boolean> {
    const query = "mutation ($id: ID!, $ifVersion: Int) { deleteCategory(id: $id, ifVersion: $ifVersion) }";
    return (await runGraphQL<{ deleteCategory: boolean }>(this.#auth, query, { id, ...options })).deleteCategory;
  }

  /**
   * Every change to any category, in commit order, each once, until the returned function is called. When
   * the stream ends (the token expired or was revoked, the connection dropped, svc restarted) the client
   * renews the token if it must and subscribes again after the last event's cursor, so nothing is lost or
   * repeated. A RESYNC event means svc no longer holds what was missed: read the list again.
   */
  subscribe(listener: (event: CategoryEvent) => void, options: SubscribeOptions = {}): () => void {
    const stopped = new AbortController();
    void follow(this.#http, this.#auth, listener, options, stopped.signal);
    return () => stopped.abort();
  }
}

const SUBSCRIPTION = `subscription ($after: String) { categoryEvents(after: $after) { kind id cursor category { ...Category } } } ${CATEGORY}`;

/** How one stream ended: subscribe again after a pause (`wait`, when svc said), renew the token first, or stop. */
type Ending = { again: true; wait?: number } | { renew: true } | { stop: SvcError };

interface Next {
  data?: { categoryEvents: CategoryEvent } | null;
  errors?: GraphQLErrorEntry[];
}

/** Follows the events until `signal` aborts; `wait` pauses between attempts (a test's may count them). */
export async function follow(
  http: Http,
  auth: Auth,
  listener: (event: CategoryEvent) => void,
  options: SubscribeOptions,
  signal: AbortSignal,
  wait: (ms: number, signal: AbortSignal) => Promise<void> = pause,
): Promise<void> {
  let cursor = options.after ?? null;
  let failures = 0;
  /**
   * A renewal since the last event: a second in a row means svc refuses fresh tokens too. Not reset when a
   * stream opens: svc (or a proxy) may open one and refuse its token at once, which would loop without a pause.
   */
  let renewedSinceEvent = false;

  const ending = (errors: GraphQLErrorEntry[] | undefined, response: Response): Ending => {
    const error = graphqlError(errors ?? [], response);
    if (error.graphqlCode === "TOKEN_EXPIRED" || error.graphqlCode === "UNAUTHENTICATED") return { renew: true };
    if (error.graphqlCode === "BAD_USER_INPUT") return { stop: error };
    return { again: true, wait: error.retryAfter === null ? undefined : error.retryAfter * 1000 };
  };

  /** Opens one stream and hands on its events until it ends. */
  const once = async (token: string | null): Promise<Ending> => {
    const response = await http.send(
      {
        method: "POST",
        path: "/graphql",
        body: { query: SUBSCRIPTION, variables: { after: cursor } },
        headers: { accept: "text/event-stream" },
        signal,
      },
      token,
    );
    const type = response.headers.get("content-type") ?? "";
    if (!type.startsWith("text/event-stream") || !response.body) {
      if (response.status === 401) {
        await response.body?.cancel().catch(() => {});
        return { renew: true };
      }
      if (!type.includes("json") || type.includes("problem+json")) {
        const error = await problemError(response);
        return error.status >= 400 && error.status < 500 && error.status !== 429
          ? { stop: error }
          : { again: true, wait: error.retryAfter === null ? undefined : error.retryAfter * 1000 };
      }
      const answer = (await response.json().catch(() => ({}))) as Next;
      return ending(answer.errors, response);
    }
    options.onOpen?.({ fresh: cursor === null });
    for await (const message of serverSentEvents(response.body)) {
      if (message.event === "complete") break;
      if (message.event !== "next") continue;
      const next = JSON.parse(message.data) as Next;
      const event = next.data?.categoryEvents;
      if (!event) return ending(next.errors, response);
      failures = 0;
      renewedSinceEvent = false;
      if (event.kind !== "RESYNC" && cursor !== null && !isAfter(event.cursor, cursor)) continue;
      cursor = event.cursor;
      handOn(listener, event);
    }
    // Ended without an error (svc stopping, a proxy's timeout): again, after the shortest pause.
    return { again: true };
  };

  while (!signal.aborted) {
    let result: Ending;
    let token: string | null = null;
    try {
      token = await auth.token();
      result = await once(token);
    } catch (error) {
      if (signal.aborted) return;
      // No answer, or the connection dropped mid-stream: again after a pause.
      result = { again: true };
    }
    if (signal.aborted) return;
    if ("stop" in result) {
      options.onError?.(result.stop);
      return;
    }
    if ("renew" in result) {
      const renewed = await auth.renewAfter(token).catch(() => undefined);
      if (renewed === null) {
        options.onError?.(
          new SvcError({ status: 401, code: "unauthorized", title: "Unauthorized", detail: "The session is over." }),
        );
        return;
      }
      // At once after one renewal; a renewal again before any event (svc, or a proxy, refusing fresh
      // tokens too) pauses like any failure. undefined: the renewal itself failed (network).
      if (renewed !== undefined && !renewedSinceEvent) {
        renewedSinceEvent = true;
        continue;
      }
      result = { again: true };
    }
    const backOff = Math.min(FIRST_WAIT_MS * 2 ** failures, LONGEST_WAIT_MS);
    await wait(Math.max(result.wait ?? 0, backOff), signal);
    failures++;
  }
}

/**
 * A listener that throws has still been handed the event: the error is reported (as an uncaught error
 * would be) and the subscription goes on, rather than receiving the same event again and again.
 */
function handOn(listener: (event: CategoryEvent) => void, event: CategoryEvent): void {
  try {
    listener(event);
  } catch (error) {
    const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
    if (report) report(error);
    else console.error(error);
  }
}

/**
 * Whether `cursor` comes after `last`: cursors of one database sort as text. One from another database
 * (after a restore) is taken as new.
 */
function isAfter(cursor: string, last: string): boolean {
  const database = (value: string) => value.slice(value.indexOf(".") + 1);
  return database(cursor) !== database(last) || cursor > last;
}

/** Waits `ms`, or less when stopped. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
