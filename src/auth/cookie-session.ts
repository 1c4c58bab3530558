// Cookie sessions: a login with "mode": "cookie" gets its refresh token in an HttpOnly cookie that no
// script can read, and auth/refresh and auth/logout take it from there. The access token stays in the
// body (an app keeps it in memory). Read and written with Bun's own cookie parser and serialiser, as
// a plain Set-Cookie header, so that a kept answer (Idempotency-Key) replays it like any other header.
//
// A browser sends a cookie with any request to svc, a cross-site form's included; so a request that
// the cookie authenticates must come from svc's own origin or a listed CORS origin, and be one that
// no form can send (a JSON body, or one of the headers only a script sets). docs/browser-apps.md.
import { CORS_REQUEST_HEADERS } from "../http/cors.ts";
import { isJsonType } from "../http/json-body.ts";
import { AppError } from "../errors/index.ts";
import { isCrossSite } from "./cookie-site.ts";

export const SESSION_MODES = ["json", "cookie"] as const;
export type SessionMode = (typeof SESSION_MODES)[number];

/** Over HTTPS: the __Host- prefix makes the browser refuse one set by a sibling subdomain or without Secure. */
export const SECURE_COOKIE = "__Host-svc_refresh";
/** Over plain HTTP (development on localhost): no prefix can hold without Secure. */
export const PLAIN_COOKIE = "svc_refresh";
/**
 * Where the cookie is sent over plain HTTP: the auth routes alone. A __Host- cookie must have Path=/
 * (RFC 6265bis, 4.1.3.2: a browser drops it otherwise), so over HTTPS it goes with every request to
 * svc's origin; svc reads it on auth/refresh and auth/logout only.
 */
export const PLAIN_COOKIE_PATH = "/svc-api/v1/auth";

/** Whether the client reached svc over HTTPS: the URL's scheme, or a trusted proxy's X-Forwarded-Proto. */
export function overHttps(request: Request, trustProxy: number): boolean {
  if (request.url.startsWith("https:")) return true;
  if (trustProxy === 0) return false;
  const hops = (request.headers.get("x-forwarded-proto") ?? "").split(",").map((h) => h.trim().toLowerCase());
  // The outermost trusted proxy's word, as clientAddress counts X-Forwarded-For.
  return (hops[Math.max(0, hops.length - trustProxy)] ?? "") === "https";
}

/**
 * The refresh token the request's cookie holds: only the name this scheme uses (a plain one over HTTPS
 * could be planted). Two of that name are refused (403 csrf_refused): over plain HTTP a sibling
 * subdomain can set one for the parent domain, the browser sends both, and whichever svc took could be
 * the planter's, signing the victim into the planter's session.
 */
export function cookieRefreshToken(request: Request, trustProxy: number): string | undefined {
  const header = request.headers.get("cookie");
  if (header === null) return undefined;
  const name = overHttps(request, trustProxy) ? SECURE_COOKIE : PLAIN_COOKIE;
  if (header.split(";").filter((pair) => pair.split("=", 1)[0]!.trim() === name).length > 1) {
    throw new AppError(
      "csrf_refused",
      `The request carries two ${name} cookies; one may have been set by another site under the same domain. Clear this site's cookies and sign in again.`,
    );
  }
  const value = new Bun.CookieMap(header).get(name);
  return value === null || value === "" ? undefined : value;
}

function serialized(request: Request, trustProxy: number, value: string, maxAgeSeconds: number): string {
  const secure = overHttps(request, trustProxy);
  return new Bun.Cookie(secure ? SECURE_COOKIE : PLAIN_COOKIE, value, {
    path: secure ? "/" : PLAIN_COOKIE_PATH,
    httpOnly: true,
    secure,
    // Strict: nothing svc answers is reached by following a link, so Lax would only widen who may send it.
    sameSite: "strict",
    maxAge: maxAgeSeconds,
  }).serialize();
}

type Headers = Record<string, string | number>;

/** The pair as a cookie-mode client gets it: the refresh token moved from the body into the cookie. */
export function withRefreshInCookie<T extends { refresh_token: string; refresh_expires_in: number }>(
  pair: T,
  request: Request,
  trustProxy: number,
  headers: Headers,
): Omit<T, "refresh_token"> {
  const { refresh_token: refresh, ...rest } = pair;
  headers["set-cookie"] = serialized(request, trustProxy, refresh, pair.refresh_expires_in);
  return rest;
}

/** Tells the browser to drop the cookie (after a logout, or a refresh it cannot make good). */
export function clearRefreshCookie(request: Request, trustProxy: number, headers: Headers): void {
  headers["set-cookie"] = serialized(request, trustProxy, "", 0);
}

/** The custom request headers a cross-site form cannot send (content-type aside: its value is what counts). */
const SCRIPT_ONLY_HEADERS = CORS_REQUEST_HEADERS.filter((name) => name !== "content-type");

/**
 * Refuses (403 csrf_refused) a request the refresh cookie authenticates unless it comes from svc's own
 * origin or a listed one and is not one a form could send.
 */
export function requireCookieOrigin(request: Request, origins: ReadonlySet<string>, trustProxy: number): void {
  const origin = request.headers.get("origin");
  if (origin === null || (origin !== ownOrigin(request, trustProxy) && !origins.has(origin))) {
    throw new AppError(
      "csrf_refused",
      origin === null
        ? "A request authenticated by the session cookie must carry an Origin header."
        : `Origin ${origin} may not use the session cookie: list it in SVC_CORS_ORIGINS.`,
    );
  }
  if (
    !isJsonType(request.headers.get("content-type")) &&
    !SCRIPT_ONLY_HEADERS.some((name) => request.headers.has(name))
  ) {
    throw new AppError(
      "csrf_refused",
      "A request authenticated by the session cookie must send Content-Type: application/json or an X-Request-Id header.",
    );
  }
}

/**
 * Refuses (400 cookie_cross_site) to start a cookie session for a page on another site than svc's: the
 * browser would drop the SameSite=Strict cookie set in answer, and the session vanish at the next load.
 */
export function requireCookieKept(request: Request, trustProxy: number): void {
  const own = ownOrigin(request, trustProxy);
  if (!isCrossSite(request, own)) return;
  const page = request.headers.get("origin") ?? "This page";
  throw new AppError(
    "cookie_cross_site",
    `${page} is on another site than svc (${own ?? "its own origin"}), so the browser would drop the SameSite=Strict session cookie. Serve the app and svc from one site (the same host or parent domain and scheme: both on localhost, not localhost and 127.0.0.1), or sign in with mode "json".`,
  );
}

/** svc's origin as the client addressed it: the Host header (a trusted proxy's X-Forwarded-Host) and the scheme. */
function ownOrigin(request: Request, trustProxy: number): string | null {
  const forwarded = trustProxy > 0 ? request.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  // Bun builds the URL from the Host header; a request made in process (app.handle) has only the URL.
  const host = forwarded || request.headers.get("host") || hostOf(request.url);
  return host ? `${overHttps(request, trustProxy) ? "https" : "http"}://${host.toLowerCase()}` : null;
}

function hostOf(url: string): string | null {
  return URL.canParse(url) ? new URL(url).host : null;
}
