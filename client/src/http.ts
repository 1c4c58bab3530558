// One request to svc: the URL, JSON in and out, and every failure turned into an SvcError.
import { networkError, problemError, SvcError, unexpectedAnswer } from "./errors.js";

/** The fetch the client calls: the platform's, or one of yours with the same signature. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface HttpOptions {
  baseUrl: string;
  fetch: Fetch;
  /** "include" in cookie mode, so that a page on another origin sends and keeps the session cookie. */
  credentials: RequestCredentials;
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface Call {
  method: Method;
  /** From the site root, or a whole URL (a Link header's). */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON; left out, no body. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export class Http {
  readonly baseUrl: string;
  readonly #fetch: Fetch;
  readonly #credentials: RequestCredentials;

  constructor(options: HttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#fetch = options.fetch;
    this.#credentials = options.credentials;
  }

  url(path: string, query: Call["query"] = {}): string {
    const url = new URL(path, `${this.baseUrl}/`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.href;
  }

  /**
   * Sends the call with `token` as its Bearer token (none when null). A new Request each time, so a retry
   * sends the same body again. A network failure throws SvcError network_error (saying when CORS is the
   * likely cause); any answer is returned. A whole URL on another origin than svc's throws SvcError
   * unexpected_response: the token stays with svc.
   */
  async send(call: Call, token: string | null): Promise<Response> {
    const url = this.url(call.path, call.query);
    const origin = new URL(url).origin;
    if (origin !== new URL(this.baseUrl).origin) {
      throw new SvcError({
        status: 0,
        code: "unexpected_response",
        title: "Unexpected response",
        detail: `a call to another origin (${origin}) than svc's is not sent`,
      });
    }
    const headers: Record<string, string> = { accept: "application/json", ...call.headers };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    if (token !== null) headers.authorization = `Bearer ${token}`;
    try {
      return await this.#fetch(url, {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        credentials: this.#credentials,
        signal: call.signal,
      });
    } catch (error) {
      throw networkError(error, corsSuspected(error, origin));
    }
  }
}

/**
 * The likely cause of a failed fetch in a browser page when svc is on another origin: a browser hides an
 * answer without CORS headers for the page's origin (svc sends them only to SVC_CORS_ORIGINS' origins)
 * behind the same TypeError as no answer at all, so the client cannot be sure, only say so.
 */
function corsSuspected(error: unknown, svcOrigin: string): string | undefined {
  const page = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  if (!(error instanceof TypeError) || typeof page !== "string" || page === svcOrigin) return undefined;
  return `Likely CORS: this page's origin ${page} is not svc's (${svcOrigin}), and a browser hides any answer svc gives another origin unless that origin is listed in svc's SVC_CORS_ORIGINS (or svc is not reachable at all)`;
}

/** The answer's JSON when it succeeded; its SvcError otherwise. */
export async function answerOf<T>(response: Response): Promise<T> {
  if (!response.ok) throw await problemError(response);
  if (response.status === 204) return undefined as T;
  try {
    return (await response.json()) as T;
  } catch (error) {
    throw unexpectedAnswer(response, `HTTP ${response.status} that is not JSON`, error);
  }
}

/** The URL of a Link header's relation `rel` (svc's lists: next, prev, first), or null. */
export function linkOf(header: string | null, rel: "next" | "prev" | "first"): string | null {
  for (const part of header?.split(",") ?? []) {
    const match = /<([^>]*)>\s*;(.*)/.exec(part.trim());
    if (match && new RegExp(`\\brel="?${rel}"?`).test(match[2] ?? "")) return match[1] ?? null;
  }
  return null;
}

/** The URL of a Link header's rel="next", or null. */
export const nextLink = (header: string | null): string | null => linkOf(header, "next");
