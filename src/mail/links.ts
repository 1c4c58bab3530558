// The pages a mail's link opens, served by svc itself. The token rides in the fragment, which browsers
// send to no server and put in no Referer: only the page's own script reads it, and POSTs it.
import type { MailConfig } from "../config/index.ts";

export const ACCOUNT_PAGES = {
  verifyEmail: "/svc/account/verify-email",
  resetPassword: "/svc/account/reset-password",
  confirmEmailChange: "/svc/account/confirm-email-change",
} as const;

export type AccountPage = keyof typeof ACCOUNT_PAGES;

/** The link a mail carries: SVC_PUBLIC_URL, the page, and the token in the fragment. */
export function mailLink(mail: Pick<MailConfig, "publicUrl">, page: AccountPage, token: string): string {
  return `${mail.publicUrl}${ACCOUNT_PAGES[page]}#token=${encodeURIComponent(token)}`;
}
