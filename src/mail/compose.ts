// Mails rendered from their templates, ready for the outbox. The built-in templates are plain; the sender's
// module (templates.ts, SVC_MAIL_TEMPLATES) may replace any of them.
import type { MailConfig } from "../config/index.ts";
import type { MailKind, OutboxMail } from "../db/mail-outbox.ts";

/** What a template may use. `link` for the mails that carry one; `email` the new address of a change. */
export interface MailVariables {
  username: string;
  link?: string;
  email?: string;
}

export interface Composer {
  /** The mail of this kind to `to`, about the account `userId`, rendered now. */
  compose(kind: MailKind, to: { address: string; userId: string | null }, variables: MailVariables): OutboxMail;
}

interface Rendered {
  subject: string;
  text: string;
}

const BUILT_IN: Record<MailKind, (v: MailVariables & { product: string }) => Rendered> = {
  verify_email: (v) => ({
    subject: `Confirm your e-mail address for ${v.product}`,
    text: `Hello ${v.username},\n\nOpen this link to confirm that this address is yours (it works once, for 24 hours):\n\n${v.link}\n\nIf you did not sign up for ${v.product}, ignore this mail.\n`,
  }),
  password_reset: (v) => ({
    subject: `Reset your ${v.product} password`,
    text: `Hello ${v.username},\n\nOpen this link to choose a new password (it works once, for 30 minutes):\n\n${v.link}\n\nIf you did not ask for this, ignore this mail: your password stays as it is.\n`,
  }),
  password_changed: (v) => ({
    subject: `Your ${v.product} password was changed`,
    text: `Hello ${v.username},\n\nThe password of your ${v.product} account was just changed, and every session signed out.\n\nIf this was not you, reset your password at once and tell your administrator.\n`,
  }),
  email_change: (v) => ({
    subject: `Confirm your new e-mail address for ${v.product}`,
    text: `Hello ${v.username},\n\nOpen this link to make ${v.email} your account's address (it works once, for 24 hours):\n\n${v.link}\n\nIf you did not ask for this, ignore this mail.\n`,
  }),
  email_changed: (v) => ({
    subject: `Your ${v.product} e-mail address is changing`,
    text: `Hello ${v.username},\n\nYour ${v.product} account's address was changed to ${v.email}. Mail about the account goes there from now on.\n\nIf this was not you, tell your administrator at once.\n`,
  }),
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function createComposer(
  config: Pick<MailConfig, "productName" | "publicUrl">,
  now = () => Date.now(),
): Composer {
  const host = new URL(config.publicUrl).hostname || "localhost";
  return {
    compose(kind, to, variables) {
      const { subject, text } = BUILT_IN[kind]({ ...variables, product: config.productName });
      const id = Bun.randomUUIDv7();
      return {
        id,
        kind,
        recipient: to.address,
        userId: to.userId,
        subject,
        textBody: text,
        htmlBody: `<!doctype html><meta charset="utf-8"><pre style="font:inherit;white-space:pre-wrap">${escapeHtml(text)}</pre>`,
        messageId: `<${id}@${host}>`,
        createdAt: new Date(now()).toISOString(),
      };
    },
  };
}
