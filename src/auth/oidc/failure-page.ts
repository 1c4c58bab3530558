// How a sign-in through a provider ends when it fails and has nowhere listed to report to: a small page of
// svc's own saying what happened and where to go, never a stack trace. No script, nothing from elsewhere.
import { ERROR_CODES, type ErrorCode, statusOf } from "../../errors/index.ts";
import { ACCOUNT_PAGE_CSP } from "../../mail/pages.ts";

const CATALOGUED = new Set<string>(ERROR_CODES);
const isErrorCode = (code: string): code is ErrorCode => CATALOGUED.has(code);

/** Why a flow failed: the `error` a listed return_to receives, and the page's words. */
export const FLOW_FAILURES = {
  oidc_provider_error: "The sign-in provider did not sign you in (you may have cancelled).",
  oidc_state_mismatch: "This answer from the sign-in provider does not belong to the sign-in this browser started.",
  oidc_flow_expired: "The sign-in was not started in this browser, or took longer than 10 minutes.",
  oidc_invalid_response: "The sign-in provider's answer did not pass svc's checks.",
  oidc_provider_unavailable: "The sign-in provider cannot be reached right now.",
  oidc_email_missing: "The sign-in provider gave no e-mail address, which an account needs.",
  oidc_email_unverified:
    "The sign-in provider has not verified your e-mail address, so no account is made from it. Sign up with a password, then link the provider from your account.",
  email_taken:
    "An account with this e-mail address exists. Sign in with its password, then link this provider from your account.",
  identity_taken: "This sign-in is linked to another account already.",
  account_disabled: "This account is disabled.",
  email_unverified: "Confirm your e-mail address first: open the link svc mailed you.",
  signup_closed: "Sign-up is closed: an administrator creates accounts.",
  invitation_required: "Sign-up is by invitation: start again from the invitation's link.",
  invalid_invitation: "The invitation cannot be used: wrong, used, expired or revoked.",
  internal: "Something went wrong on svc's side; try again.",
} as const;

export type FlowFailureCode = keyof typeof FLOW_FAILURES;

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The page for `code`, with a link back to `back` (svc's own address: the console, or where the flow began). */
export function failurePage(code: FlowFailureCode, back: string, requestId: string): Response {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Sign-in failed</title></head>
<body><h1>Sign-in failed</h1><p role="alert">${escape(FLOW_FAILURES[code])}</p>
<p><a href="${escape(back)}">Back to sign-in</a></p>
<p><small>Error <code>${code}</code> · request <code>${escape(requestId)}</code></small></p></body></html>`;
  return new Response(body, {
    // The catalogue's status for its codes (409 email_taken, 403 signup_closed...); the flow's own are 400.
    status: isErrorCode(code) ? statusOf(code) : 400,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": ACCOUNT_PAGE_CSP,
      "referrer-policy": "no-referrer",
      "cache-control": "no-store",
      "x-frame-options": "DENY",
    },
  });
}
