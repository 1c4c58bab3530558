// Talking to svc's own API, same origin, in cookie mode: the refresh token is in svc's HttpOnly cookie,
// which no script can read, and the access token lives only in memory; nothing goes to the page's
// storage. A reload or a duplicated tab resumes the session by one refresh through the cookie. The
// browser keeps one cookie for every tab, so each refreshes with the latest refresh token, and tabs
// refreshing at once get the same successor (svc's reuse window). Within a tab, one refresh at a time:
// shortly before the access token expires, and on a 401, shared by every request waiting on it.
import type { components } from "../../../client/src/openapi.generated.ts";

const API = "/svc-api/v1";
/** How long before the access token expires it is renewed: a minute, or a fifth of a shorter lifetime. */
const RENEW_AHEAD_MS = 60_000;
/** The longest delay setTimeout takes (about 24.8 days; a longer one fires at once). */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;

/** An answer that was not a success, as the API's problem details (or GraphQL's error) tell it. */
export class ApiError extends Error {
  constructor(
    readonly title: string,
    readonly detail: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(`${title}: ${detail}`);
  }
}

export type Me = components["schemas"]["Me"];

/** A cookie-mode answer of login and refresh: the refresh token went to the cookie. */
interface Session {
  token: string;
  expires_in: number;
  user: Me;
}

let access: string | null = null;
/** The account of the session, once signed in or resumed. */
let account: Me | null = null;
let refreshing: Promise<boolean> | null = null;
let renewal: ReturnType<typeof setTimeout> | undefined;
let onChange: (me: Me | null) => void = () => {};
/** Aborted when the session ends here: every subscription's stream stops with it. */
let streams = new AbortController();

/**
 * Called when the session changes under the console: null when it is gone (refused refresh, signed out in
 * another tab), or another administrator when another tab signed in as them (the tabs share one cookie).
 */
export function whenSessionChanges(callback: (me: Me | null) => void): void {
  onChange = callback;
}

async function problem(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { title?: string; detail?: string; code?: string };
    return new ApiError(body.title ?? response.statusText, body.detail ?? "", response.status, body.code ?? "");
  } catch {
    return new ApiError(response.statusText || "Error", `The server answered ${response.status}.`, response.status, "");
  }
}

/**
 * A POST to the auth routes, with the cookie. Always a JSON body: svc refuses a request the cookie
 * authenticates unless it is one no cross-site form can send. Never an access token: the cookie names
 * the session.
 */
function postWithCookie(path: string, body: unknown = {}): Promise<Response> {
  return fetch(`${API}/auth${path}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Keeps the session's access token, and renews it shortly before it expires. */
function start(session: Session): void {
  access = session.token;
  account = session.user;
  clearTimeout(renewal);
  const lifetime = session.expires_in * 1000;
  renewal = setTimeout(renew, Math.min(lifetime - Math.min(RENEW_AHEAD_MS, lifetime / 5), LONGEST_TIMEOUT_MS));
}

function forget(): void {
  access = null;
  account = null;
  clearTimeout(renewal);
  streams.abort();
  streams = new AbortController();
}

function renew(): void {
  // Unreachable or refusing for now (not a 400 or 401): the next request's 401 tries again.
  refresh().catch(() => {});
}

/**
 * Trades the cookie for a new access token (svc rotates the cookie). false when there is no session:
 * no cookie (400) or one svc refused (401, and svc cleared it). Any other failure is thrown.
 */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const response = await postWithCookie("/refresh");
    if (response.status === 400 || response.status === 401) {
      const had = account !== null;
      forget();
      if (had) onChange(null);
      return false;
    }
    if (!response.ok) throw await problem(response);
    const before = account;
    const session = (await response.json()) as Session;
    start(session);
    if (before && (before.id !== session.user.id || session.user.role !== before.role)) onChange(admin(session.user));
    return true;
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

const admin = (me: Me): Me | null => (me.role === "admin" ? me : null);

/** Signs in; only an administrator's session is kept. */
export async function signIn(username: string, password: string): Promise<Me> {
  const response = await postWithCookie("/login", { username, password, mode: "cookie" });
  if (!response.ok) throw await problem(response);
  const session = (await response.json()) as Session;
  if (!admin(session.user)) {
    // Not kept: the session just started is ended at once, by the cookie it set (which svc clears).
    await postWithCookie("/logout");
    throw new ApiError(
      "Not an administrator",
      `${session.user.username} is not an administrator of this svc.`,
      403,
      "forbidden",
    );
  }
  start(session);
  return session.user;
}

/** Resumes the session the cookie holds (after a reload, in a duplicated tab). null: none to resume. */
export async function resume(): Promise<Me | null> {
  if (!(await refresh()) || !account) return null;
  return admin(account);
}

/**
 * Ends this session on the server (its tokens stop working, svc clears the cookie), then here. By the
 * cookie, which outlives the access token: after a long idle the access token has expired, and a logout
 * by it would be refused while the session went on.
 */
export async function signOut(): Promise<void> {
  // A refresh under way would rotate the cookie after the logout had named the one it replaces.
  await refreshing?.catch(() => {});
  const response = await postWithCookie("/logout");
  // 400 or 401: no cookie, or one already spent: the session had ended. Otherwise it goes on: say so.
  if (!response.ok && response.status !== 400 && response.status !== 401) throw await problem(response);
  forget();
}

/**
 * Sends with the access token; on a 401, sends once more after one refresh (none when another request
 * renewed the token meanwhile). A 401 after that: the session is gone.
 */
async function authorized(send: (token: string | null) => Promise<Response>): Promise<Response> {
  const sent = access;
  let response = await send(sent);
  if (response.status === 401 && (access !== sent || (await refresh()))) response = await send(access);
  if (response.status === 401) {
    forget();
    onChange(null);
  }
  return response;
}

export interface Answer<T> {
  body: T;
  /** The next page's URL, from the Link header. */
  next: string | null;
}

/** A call to the REST API (path under /svc-api/v1, or absolute); one refresh and retry on 401. */
export async function request<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const url = path.startsWith("/svc") ? path : `${API}${path}`;
  const response = await authorized((token) =>
    fetch(url, {
      method,
      headers: {
        ...(body !== undefined && { "content-type": "application/json" }),
        ...(token && { authorization: `Bearer ${token}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  if (!response.ok) throw await problem(response);
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1] ?? null;
  return { body: (response.status === 204 ? null : await response.json()) as T, next };
}

/** A GraphQL operation; its first error becomes an ApiError with the error's code. */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await authorized((token) =>
    fetch("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ query, variables }),
    }),
  );
  const result = (await response.json()) as {
    data?: T;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  };
  const error = result.errors?.[0];
  if (error)
    throw new ApiError(titleOf(error.extensions?.code), error.message, response.status, error.extensions?.code ?? "");
  return result.data as T;
}

/** An open subscription: svc's answer (its stream unread) and the access token it was opened with. */
export interface Opened {
  response: Response;
  token: string | null;
}

/**
 * A GraphQL subscription by Server-Sent Events (graphql-sse's distinct connections mode), with the access
 * token; one refresh and retry on 401. null when there is no session. The stream is aborted by `signal`,
 * and when the session ends here (signed out, or svc refused the cookie).
 */
export async function subscribe(
  query: string,
  variables: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Opened | null> {
  if (!account) return null;
  const stopped = AbortSignal.any([signal, streams.signal]);
  let token: string | null = null;
  const response = await authorized((sent) => {
    token = sent;
    return fetch("/graphql", {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        ...(sent && { authorization: `Bearer ${sent}` }),
      },
      body: JSON.stringify({ query, variables }),
      signal: stopped,
    });
  });
  return account ? { response, token } : null;
}

/**
 * After a stream ended for its token (expired, or no longer valid): whether there is a fresh one. None is
 * asked for when another request renewed it meanwhile. false: the session is gone.
 */
export async function renewedSince(token: string | null): Promise<boolean> {
  return (access !== null && access !== token) || (await refresh());
}

function titleOf(code: string | undefined): string {
  const titles: Record<string, string> = {
    BAD_USER_INPUT: "Invalid input",
    CONFLICT: "Conflict",
    FORBIDDEN: "Forbidden",
    NOT_FOUND: "Not found",
    UNAUTHENTICATED: "Signed out",
  };
  return (code && titles[code]) ?? "Error";
}
