// The pages mailed links open (ACCOUNT_PAGES), served by svc itself: small, with no asset from elsewhere
// and a strict Content-Security-Policy. The token is in the link's fragment, which no server and no
// Referer sees; the page's script takes it from there, removes it from the address bar and POSTs it.
import { Elysia } from "elysia";
import { ACCOUNT_PAGES } from "./links.ts";
import { PAGE_SCRIPT, PAGE_STYLE } from "./page-script.ts";

const BASE = "/svc/account";
const SCRIPT = `${BASE}/account.js`;
const STYLE = `${BASE}/account.css`;

/** Only the page's own script and style, calls to svc itself, no frame, no form sent elsewhere. */
export const ACCOUNT_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'none'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS = {
  "content-security-policy": ACCOUNT_PAGE_CSP,
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
};

type Page = "verify-email" | "reset-password" | "confirm-email-change";

const FORMS: Record<Page, { title: string; fields: string; button: string }> = {
  "verify-email": { title: "Confirm your e-mail address", fields: "", button: "Confirm my address" },
  "reset-password": {
    title: "Choose a new password",
    fields:
      '<label>New password <input name="password" type="password" autocomplete="new-password" minlength="8" maxlength="128" required></label>' +
      '<label>Again <input name="again" type="password" autocomplete="new-password" minlength="8" maxlength="128" required></label>',
    button: "Set the password",
  },
  "confirm-email-change": { title: "Confirm your new e-mail address", fields: "", button: "Make it my address" },
};

function html(page: Page): string {
  const { title, fields, button } = FORMS[page];
  // Relative to the page, so svc behind a path prefix (SVC_PUBLIC_URL) serves them too.
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${title}</title><link rel="stylesheet" href="account.css"></head>
<body data-page="${page}"><h1>${title}</h1><form id="form" hidden>${fields}<button type="submit">${button}</button></form>
<p id="outcome" role="status" aria-live="polite"></p><script src="account.js"></script></body></html>`;
}

const answer = (body: string, type: string) => () =>
  new Response(body, { headers: { ...HEADERS, "content-type": `${type}; charset=utf-8` } });

export function accountPages() {
  const hide = { detail: { hide: true } };
  return new Elysia({ name: "svc/account-pages" })
    .get(ACCOUNT_PAGES.verifyEmail, answer(html("verify-email"), "text/html"), hide)
    .get(ACCOUNT_PAGES.resetPassword, answer(html("reset-password"), "text/html"), hide)
    .get(ACCOUNT_PAGES.confirmEmailChange, answer(html("confirm-email-change"), "text/html"), hide)
    .get(SCRIPT, answer(PAGE_SCRIPT, "text/javascript"), hide)
    .get(STYLE, answer(PAGE_STYLE, "text/css"), hide);
}
