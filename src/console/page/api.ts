// Talking to svc's own API, same origin. The access token lives only in memory; the refresh token in
// sessionStorage (gone with the tab, never in localStorage), so a reload resumes the session and a
// 401 is answered by one refresh, shared by every request waiting on it.

const API = "/svc-api/v1";
const REFRESH_KEY = "svc-admin.refresh";

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

export interface Me {
  id: string;
  username: string;
  role: "user" | "admin";
}

let access: string | null = null;
let refreshing: Promise<boolean> | null = null;
let onSignedOut: () => void = () => {};

/** Called when the session is gone (refused refresh): the console shows the sign-in form. */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

async function problem(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { title?: string; detail?: string; code?: string };
    return new ApiError(body.title ?? response.statusText, body.detail ?? "", response.status, body.code ?? "");
  } catch {
    return new ApiError(response.statusText || "Error", `The server answered ${response.status}.`, response.status, "");
  }
}

async function post(path: string, body: unknown, token?: string): Promise<Response> {
  return fetch(`${API}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
}

interface Pair {
  token: string;
  refresh_token: string;
  user: Me;
}

function keep(pair: Pair): void {
  access = pair.token;
  sessionStorage.setItem(REFRESH_KEY, pair.refresh_token);
}

function forget(): void {
  access = null;
  sessionStorage.removeItem(REFRESH_KEY);
}

/** Trades the kept refresh token for a new pair; false (and signed out) when refused. */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const kept = sessionStorage.getItem(REFRESH_KEY);
    if (!kept) return false;
    const response = await post("/auth/refresh", { refresh_token: kept });
    if (!response.ok) {
      forget();
      return false;
    }
    keep((await response.json()) as Pair);
    return true;
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** Signs in; only an administrator's session is kept. */
export async function signIn(username: string, password: string): Promise<Me> {
  const response = await post("/auth/login", { username, password });
  if (!response.ok) throw await problem(response);
  const pair = (await response.json()) as Pair;
  if (pair.user.role !== "admin") {
    // Not kept: the session just started is ended at once.
    await post("/auth/logout", { refresh_token: pair.refresh_token });
    throw new ApiError(
      "Not an administrator",
      `${pair.user.username} is not an administrator of this svc.`,
      403,
      "forbidden",
    );
  }
  keep(pair);
  return pair.user;
}

/** Resumes the tab's session after a reload. null: none to resume. */
export async function resume(): Promise<Me | null> {
  if (!(await refresh())) return null;
  const me = (await request("GET", "/users/me")).body as Me;
  return me.role === "admin" ? me : null;
}

/**
 * Ends this session on the server (its tokens stop working), then here. By the refresh token, which
 * outlives the access token: after a long idle the access token has expired, and a logout by it would be
 * refused while the session went on.
 */
export async function signOut(): Promise<void> {
  try {
    const kept = sessionStorage.getItem(REFRESH_KEY);
    if (kept) await post("/auth/logout", { refresh_token: kept });
    else if (access) await post("/auth/logout", {}, access);
  } finally {
    forget();
  }
}

export interface Answer<T> {
  body: T;
  /** The next page's URL, from the Link header. */
  next: string | null;
}

/** A call to the REST API (path under /svc-api/v1, or absolute); one refresh and retry on 401. */
export async function request<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const url = path.startsWith("/svc") ? path : `${API}${path}`;
  const send = () =>
    fetch(url, {
      method,
      headers: {
        ...(body !== undefined && { "content-type": "application/json" }),
        ...(access && { authorization: `Bearer ${access}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  let response = await send();
  if (response.status === 401 && (await refresh())) response = await send();
  if (response.status === 401) onSignedOut();
  if (!response.ok) throw await problem(response);
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1] ?? null;
  return { body: (response.status === 204 ? null : await response.json()) as T, next };
}

/** A GraphQL operation; its first error becomes an ApiError with the error's code. */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const send = () =>
    fetch("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...(access && { authorization: `Bearer ${access}` }) },
      body: JSON.stringify({ query, variables }),
    });
  let response = await send();
  if (response.status === 401 && (await refresh())) response = await send();
  if (response.status === 401) onSignedOut();
  const result = (await response.json()) as {
    data?: T;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  };
  const error = result.errors?.[0];
  if (error)
    throw new ApiError(titleOf(error.extensions?.code), error.message, response.status, error.extensions?.code ?? "");
  return result.data as T;
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
