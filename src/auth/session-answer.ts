// How a route that starts or renews a session answers: the token pair in the body, or in cookie mode its
// refresh token moved into the session cookie (cookie-session.ts); and how the OpenAPI document says so.
import { ref } from "../http/openapi.ts";
import { requireCookieKept, requireCookieOrigin, type SessionMode, withRefreshInCookie } from "./cookie-session.ts";

const COOKIE_DOC =
  "Cookie mode only: the session cookie (__Host-svc_refresh over HTTPS, svc_refresh over plain HTTP), HttpOnly, SameSite=Strict, holding the new refresh token.";

/** The success of a route that answers with a session's pair (in cookie mode, its refresh token in the cookie). */
export const pairAnswer = (description: string) => ({
  status: 200,
  description,
  schema: ref("Login"),
  headers: { "Set-Cookie": COOKIE_DOC },
});

export type SessionCookies = ReturnType<typeof sessionCookies>;

/** `corsOrigins`: SVC_CORS_ORIGINS, the origins besides svc's own that may use the session cookie. */
export function sessionCookies(trustProxy: number, corsOrigins: readonly string[]) {
  const origins = new Set(corsOrigins);
  return {
    /** Throws csrf_refused unless the request may use the session cookie: a cookie is set only for such a page. */
    cookieOrigin(request: Request): void {
      requireCookieOrigin(request, origins, trustProxy);
    },

    /**
     * Before a cookie session starts: csrf_refused unless the page may use the cookie, cookie_cross_site
     * when its browser would drop it (another site than svc's).
     */
    cookieTarget(request: Request): void {
      requireCookieOrigin(request, origins, trustProxy);
      requireCookieKept(request, trustProxy);
    },

    /** A session's pair as its mode answers it: in cookie mode the refresh token goes to the cookie. */
    answered<T extends { refresh_token: string; refresh_expires_in: number }>(
      pair: T,
      mode: SessionMode | undefined,
      request: Request,
      headers: Record<string, string | number>,
    ) {
      return mode === "cookie" ? withRefreshInCookie(pair, request, trustProxy, headers) : pair;
    },
  };
}
