// Whether a page and svc are on one site, as a browser decides whether it keeps svc's SameSite=Strict
// session cookie: a cookie set in answer to a cross-site request is dropped, so a cookie-mode sign-in from
// such a page would answer 200 and leave no session behind (docs/browser-apps.md).

/**
 * An origin's site, simplified: its scheme and its host's last two labels ("https://example.com" for
 * app.example.com); an IP address or a one-label host (localhost) is a site of its own. Registrable
 * domains under a longer public suffix (example.co.uk) come out as the suffix: such hosts are taken as
 * one site, never wrongly as two, so a working setup is never refused.
 */
export function siteOf(origin: string): string | null {
  if (!URL.canParse(origin)) return null;
  const { protocol, hostname } = new URL(origin);
  if (hostname === "") return null;
  const address = hostname.startsWith("[") || /^\d+(\.\d+){3}$/.test(hostname);
  return `${protocol}//${address ? hostname : hostname.split(".").slice(-2).join(".")}`;
}

/**
 * True when the browser says the request is cross-site (Sec-Fetch-Site, sent by every current browser), or,
 * without that header, when the page's Origin is on another site than `own` (svc's origin). Unknown either
 * way: false, as before this check.
 */
export function isCrossSite(request: Request, own: string | null): boolean {
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite !== null) return fetchSite === "cross-site";
  const origin = request.headers.get("origin");
  if (origin === null || own === null) return false;
  return siteOf(origin) !== siteOf(own);
}
