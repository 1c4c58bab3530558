// createClient: one object for svc's REST and GraphQL, sharing one session.
import { Auth, type SessionMode } from "./auth.js";
import { Categories } from "./categories.js";
import {
  type Document,
  type GraphQLArguments,
  type GraphQLRequestOptions,
  runGraphQL,
  type TypedDocument,
  type UntypedDocument,
} from "./graphql.js";
import { answerOf, type Fetch, Http, type Method, nextLink } from "./http.js";
import { memoryStorage, type SessionStorage } from "./storage.js";
import { Users } from "./users.js";
import { emailVerificationCalls, type EmailVerificationCalls } from "./email-verification.js";
import { passwordResetCalls, type PasswordResetCalls } from "./password-reset.js";
import { secondFactorCalls, type SecondFactorCalls } from "./second-factors.js";
import { oidcCalls, type OidcCalls } from "./oidc.js";
import { sessionsCalls, type SessionsCalls } from "./sessions.js";
import { adminCalls, type AdminCalls } from "./admin.js";
import { type Health, readHealth } from "./health.js";

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
  /**
   * Renew the access token when it is due even while no call is made (false by default: an idle client renews
   * at its next call). For a page left open that should stay signed in, as svc's admin console does.
   */
  keepAlive?: boolean;
  /** A fetch of your own (a test's, a proxy's); the global one by default. */
  fetch?: Fetch;
}

/** A call to a route the client does not wrap (`client.request`). */
export interface RequestOptions {
  /** Sent as JSON; left out, no body. */
  body?: unknown;
  /** Added to the URL's query. */
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** What `client.request` answers: a success, read. */
export interface Answer<T> {
  status: number;
  headers: Headers;
  /** The answer's JSON; undefined for 204 No Content. */
  body: T;
  /** The next page's URL, from a Link header's rel="next" (svc's lists); null on the last page. */
  next: string | null;
}

export interface Client {
  /**
   * The session, with (email-verification.ts) verifyEmail and resendVerification, and (password-reset.ts)
   * requestPasswordReset and resetPassword, (second-factors.ts) the authenticator app, passkeys and step-up,
   * (oidc.ts) signing in through OpenID providers and the identities linked to the account, and (sessions.ts)
   * your sessions.
   */
  readonly auth: Auth & EmailVerificationCalls & PasswordResetCalls & SecondFactorCalls & OidcCalls & SessionsCalls;
  readonly users: Users;
  /** The admin routes (admin.ts): accounts, reset codes, invitations, audit, mail, backups. */
  readonly admin: AdminCalls;
  readonly categories: Categories;
  /**
   * svc's health (health.ts), no token sent: its answer whether the database answers (200) or not (503,
   * status "unavailable"). Anything else throws SvcError (network_error, svc's problem code, unexpected_response).
   */
  health(options?: { signal?: AbortSignal }): Promise<Health>;
  /** Stops listening to other tabs and the store (a script can then exit); the session is kept. */
  close(): void;
  /**
   * A call to any route of svc's, as the client makes its own: JSON in and out, the session's token (renewed
   * first when due; on a 401 renewed and the call sent again once). For the routes the client does not wrap
   * (`/svc-api/v1/admin/...`); `path` is from the site root, or a whole URL on svc's origin (a `next`). A
   * failure throws SvcError.
   */
  request<T = unknown>(method: Method, path: string, options?: RequestOptions): Promise<Answer<T>>;
  /**
   * Runs a query or mutation: typed by a typed document (graphql-codegen), its variables required when it
   * has a required one; else `unknown` unless you say.
   */
  graphql<Result, Variables extends object = Record<string, unknown>>(
    document: TypedDocument<Result, Variables>,
    ...args: GraphQLArguments<Variables>
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
    keepAlive: options.keepAlive,
  });
  return {
    auth: Object.assign(
      auth,
      emailVerificationCalls(http, auth),
      passwordResetCalls(http, auth),
      secondFactorCalls(auth),
      oidcCalls(http, auth),
      sessionsCalls(auth),
    ),
    users: new Users(http, auth),
    admin: adminCalls(auth),
    categories: new Categories(http, auth),
    health: (healthOptions) => readHealth(http, healthOptions?.signal),
    close: () => auth.close(),
    request: async <T>(method: Method, path: string, request: RequestOptions = {}): Promise<Answer<T>> => {
      const response = await auth.authorized({ method, path, ...request });
      const body = await answerOf<T>(response);
      return { status: response.status, headers: response.headers, body, next: nextLink(response.headers.get("link")) };
    },
    graphql: <Result>(document: Document, variables?: object, requestOptions?: GraphQLRequestOptions) =>
      runGraphQL<Result>(auth, document, variables, requestOptions),
  };
}
