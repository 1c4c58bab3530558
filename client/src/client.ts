// createClient: one object for svc's REST and GraphQL, sharing one session.
import { Auth, type SessionMode } from "./auth.js";
import { Categories } from "./categories.js";
import {
  type Document,
  type GraphQLRequestOptions,
  runGraphQL,
  type TypedDocument,
  type UntypedDocument,
} from "./graphql.js";
import { type Fetch, Http } from "./http.js";
import { memoryStorage, type SessionStorage } from "./storage.js";
import { Users } from "./users.js";

export interface ClientOptions {
  /** Where svc is: `https://svc.example.com`. In a browser, the page's own origin when left out. */
  baseUrl?: string;
  /**
   * json (default): the refresh token is the client's, kept in `storage`. cookie: svc keeps it in an HttpOnly
   * cookie (browsers; svc must be on the page's origin or list it in SVC_CORS_ORIGINS).
   */
  mode?: SessionMode;
  /** Where a json-mode session is kept: memory (default), `localStorageAdapter()`, or your own. */
  storage?: SessionStorage;
  /** The key the session is kept under (two clients of different svc instances in one store need two). */
  storageKey?: string;
  /**
   * The longest a token refresh may take (ms, 30 s by default) before it fails as network_error: a refresh
   * holds the lock every call, client and tab of the session waits on.
   */
  renewTimeoutMs?: number;
  /** A fetch of your own (a test's, a proxy's); the global one by default. */
  fetch?: Fetch;
}

export interface Client {
  readonly auth: Auth;
  readonly users: Users;
  readonly categories: Categories;
  /** Stops listening to other tabs and the store (a script can then exit); the session is kept. */
  close(): void;
  /** Runs a query or mutation: typed by a typed document (graphql-codegen), else `unknown` unless you say. */
  graphql<Result, Variables extends object = Record<string, unknown>>(
    document: TypedDocument<Result, Variables>,
    variables?: Variables,
    options?: GraphQLRequestOptions,
  ): Promise<Result>;
  graphql<Result = unknown>(
    document: UntypedDocument,
    variables?: Record<string, unknown>,
    options?: GraphQLRequestOptions,
  ): Promise<Result>;
}

export function createClient(options: ClientOptions = {}): Client {
  const baseUrl = options.baseUrl ?? (globalThis as { location?: { origin: string } }).location?.origin;
  if (!baseUrl) throw new TypeError("createClient: baseUrl is required outside a browser page");
  const mode = options.mode ?? "json";
  if (mode !== "json" && mode !== "cookie") throw new TypeError(`createClient: mode must be json or cookie`);
  const http = new Http({
    baseUrl,
    // Called unbound: some runtimes' fetch refuses to run with a client object as `this`.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    credentials: mode === "cookie" ? "include" : "same-origin",
  });
  const auth = new Auth(http, {
    mode,
    storage: options.storage ?? memoryStorage(),
    storageKey: options.storageKey ?? "svc.session",
    renewTimeoutMs: options.renewTimeoutMs,
  });
  return {
    auth,
    users: new Users(http, auth),
    categories: new Categories(http, auth),
    close: () => auth.close(),
    graphql: <Result>(document: Document, variables?: object, requestOptions?: GraphQLRequestOptions) =>
      runGraphQL<Result>(auth, document, variables, requestOptions),
  };
}
