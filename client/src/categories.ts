// The category operations ready-made, the subscription to their changes that resumes by cursor
// (subscription.ts), and the list those changes keep current (live-list.ts).
import type { Auth } from "./auth.js";
import { CATEGORY } from "./category-fragment.js";
import type { Http } from "./http.js";
import { runGraphQL } from "./graphql.js";
import { type LiveList, liveList, type LiveListOptions } from "./live-list.js";
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
import { follow, type SubscribeOptions } from "./subscription.js";

export type { Category, CategoryConnection, CategoryOrder, CreateCategoryInput, PageInfo, UpdateCategoryInput };
/** categoriesConnection's arguments: each may be left out. */
export type CategoryConnectionArgs = Partial<QueryCategoriesConnectionArgs>;
export type CategoryEvent = CategoryEventType;

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
   * repeated. A RESYNC event means svc no longer holds what was missed: read the list again. A refusal
   * (too many subscriptions, a 429, any other 4xx, CORS) stops it and reaches `onError`.
   */
  subscribe(listener: (event: CategoryEvent) => void, options: SubscribeOptions = {}): () => void {
    const stopped = new AbortController();
    void follow(this.#http, this.#auth, listener, options, stopped.signal);
    return () => stopped.abort();
  }

  /** Every category, kept current by the subscription until `stop()`: see live-list.ts. */
  live(options: LiveListOptions = {}): LiveList {
    return liveList({ read: () => this.list(), subscribe: (listener, how) => this.subscribe(listener, how) }, options);
  }
}
