// Where a sign-in through a provider may end: svc's own origin, or an address SVC_OIDC_RETURN_URLS lists.
// Checked when the flow starts, before the provider is involved, so svc never redirects anywhere else
// (an open redirect would hand a signed-in browser, or a one-time code, to whoever wrote the link).
import { CONSOLE_PATH } from "../../console/index.ts";
import { AppError } from "../../errors/index.ts";

export interface ReturnRules {
  /** SVC_PUBLIC_URL: svc's own origin (and path prefix). */
  publicUrl: string;
  /** SVC_OIDC_RETURN_URLS, as the configuration normalised them. */
  returnUrls: readonly string[];
}

/** The console: where a flow started without return_to ends. */
export const DEFAULT_RETURN_PATH = CONSOLE_PATH;

/**
 * `given` (absolute, or a path on svc's origin) as the URL to end at; throws 400 invalid_return_to for
 * anything not svc's own or listed. With mode=code the code goes in the query, so only a listed URL will do:
 * svc's own pages have no use for one, and a page of svc's origin that echoes its query must not receive it.
 */
export function returnTarget(given: string | undefined, mode: "cookie" | "code", rules: ReturnRules): string {
  const own = new URL(rules.publicUrl.endsWith("/") ? rules.publicUrl : `${rules.publicUrl}/`);
  if (given === undefined || given === "") {
    if (mode === "code") throw refused("mode=code needs return_to: one of the URLs SVC_OIDC_RETURN_URLS lists");
    return new URL(DEFAULT_RETURN_PATH.slice(1), own).href;
  }
  // URL parsers drop tabs and line breaks and read "\" as "/": "/\t/evil.example" would be another host.
  // Nothing svc lists or serves has them, so any whitespace, control character or backslash is refused.
  if (/[\s\u0000-\u001f\u007f\\]/.test(given))
    throw refused("return_to must not hold whitespace, control characters or \\");
  // A path means svc's own origin; whatever it parses to is then held to the same checks as a whole URL.
  const relative = given.startsWith("/");
  if (relative && mode === "code") throw refused("mode=code needs return_to as a whole URL SVC_OIDC_RETURN_URLS lists");
  if (!relative && !URL.canParse(given)) throw refused(`return_to is not a URL: ${given}`);
  const target = relative ? new URL(given, own.origin) : new URL(given);
  if (target.username || target.password) throw refused("return_to must not carry credentials");
  // Listed URLs were normalised without query or fragment: a listed URL allows itself with any query.
  if (rules.returnUrls.includes(target.href.split(/[?#]/)[0]!)) return target.href;
  if (mode === "cookie" && isOwnAddress(target, rules.publicUrl)) return target.href;
  throw refused(
    mode === "code"
      ? `return_to ${given} is not listed in SVC_OIDC_RETURN_URLS`
      : `return_to ${given} is neither svc's own address nor listed in SVC_OIDC_RETURN_URLS`,
  );
}

/** Whether `target` is svc's own: its origin, under its path prefix (SVC_PUBLIC_URL's path). */
export function isOwnAddress(target: URL, publicUrl: string): boolean {
  const own = new URL(publicUrl.endsWith("/") ? publicUrl : `${publicUrl}/`);
  return target.origin === own.origin && target.pathname.startsWith(own.pathname);
}

function refused(detail: string): AppError {
  return new AppError("invalid_return_to", `${detail}.`);
}
