// The cookie that carries a sign-in through a provider from its start to its callback: the sealed flow
// (flow.ts), HttpOnly, for the flow's 10 minutes, on the OIDC routes' path only. SameSite=Lax, unlike the
// session's Strict cookie: the callback is a top-level navigation from the provider's site, which a Strict
// cookie would not accompany; Lax sends it with that GET and with no cross-site POST or subresource.
import { FLOW_SECONDS } from "./flow.ts";
import { overHttps } from "../cookie-session.ts";

/** Over HTTPS: the __Secure- prefix makes the browser refuse one set without Secure (as over plain HTTP). */
export const SECURE_FLOW_COOKIE = "__Secure-svc_oidc";
export const PLAIN_FLOW_COOKIE = "svc_oidc";
export const FLOW_COOKIE_PATH = "/svc-api/v1/auth/oidc";

function cookieName(request: Request, trustProxy: number): string {
  return overHttps(request, trustProxy) ? SECURE_FLOW_COOKIE : PLAIN_FLOW_COOKIE;
}

/** The Set-Cookie value that starts a flow (`sealed`) or, with null, ends it. */
export function flowCookie(request: Request, trustProxy: number, sealed: string | null): string {
  return new Bun.Cookie(cookieName(request, trustProxy), sealed ?? "", {
    path: FLOW_COOKIE_PATH,
    httpOnly: true,
    secure: overHttps(request, trustProxy),
    sameSite: "lax",
    maxAge: sealed === null ? 0 : FLOW_SECONDS,
  }).serialize();
}

/** The sealed flow the request's cookie holds, if any (only the name this scheme uses). */
export function sealedFlow(request: Request, trustProxy: number): string | undefined {
  const header = request.headers.get("cookie");
  if (header === null) return undefined;
  return new Bun.CookieMap(header).get(cookieName(request, trustProxy)) || undefined;
}
