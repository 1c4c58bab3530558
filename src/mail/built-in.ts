// The built-in templates of each mail: a subject, a text body and an HTML body, in the one scheme an
// SVC_MAIL_TEMPLATES folder overrides them in ({{variable}}, escaped in HTML; templates.ts).
import type { MailKind } from "../db/mail-outbox.ts";

export type TemplatePart = "subject" | "text" | "html";
export type Templates = Record<MailKind, Record<TemplatePart, string>>;

/** The variables each kind's templates may use. */
export const VARIABLES: Record<MailKind, readonly string[]> = {
  verify_email: ["product", "username", "link"],
  password_reset: ["product", "username", "link"],
  password_changed: ["product", "username"],
  email_change: ["product", "username", "link", "email"],
  email_changed: ["product", "username", "email"],
};

/** A plain page: one column, system fonts, a link as a button and again as text for clients that hide it. */
const page = (paragraphs: string[], link?: string) =>
  [
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    "<title>{{product}}</title></head>",
    '<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;line-height:1.5;color:#1f2937">',
    '<div style="max-width:560px;margin:0 auto">',
    ...paragraphs.map((p) => `<p>${p}</p>`),
    ...(link
      ? [
          `<p><a href="${link}" style="display:inline-block;padding:10px 18px;background:#2563eb;color:#ffffff;border-radius:6px;text-decoration:none">Open the link</a></p>`,
          `<p style="font-size:13px;color:#6b7280;word-break:break-all">${link}</p>`,
        ]
      : []),
    '<p style="font-size:13px;color:#6b7280">{{product}}</p>',
    "</div></body></html>",
    "",
  ].join("\n");

export const BUILT_IN: Templates = {
  verify_email: {
    subject: "Confirm your e-mail address for {{product}}",
    text: "Hello {{username}},\n\nOpen this link to confirm that this address is yours (it works once, for 24 hours):\n\n{{link}}\n\nIf you did not sign up for {{product}}, ignore this mail.\n",
    html: page(
      [
        "Hello {{username}},",
        "Open this link to confirm that this address is yours (it works once, for 24 hours).",
        "If you did not sign up for {{product}}, ignore this mail.",
      ],
      "{{link}}",
    ),
  },
  password_reset: {
    subject: "Reset your {{product}} password",
    text: "Hello {{username}},\n\nOpen this link to choose a new password (it works once, for 30 minutes):\n\n{{link}}\n\nIf you did not ask for this, ignore this mail: your password stays as it is.\n",
    html: page(
      [
        "Hello {{username}},",
        "Open this link to choose a new password (it works once, for 30 minutes).",
        "If you did not ask for this, ignore this mail: your password stays as it is.",
      ],
      "{{link}}",
    ),
  },
  password_changed: {
    subject: "Your {{product}} password was changed",
    text: "Hello {{username}},\n\nThe password of your {{product}} account was just changed, and every session signed out.\n\nIf this was not you, reset your password at once and tell your administrator.\n",
    html: page([
      "Hello {{username}},",
      "The password of your {{product}} account was just changed, and every session signed out.",
      "If this was not you, reset your password at once and tell your administrator.",
    ]),
  },
  email_change: {
    subject: "Confirm your new e-mail address for {{product}}",
    text: "Hello {{username}},\n\nOpen this link to make {{email}} your account's address (it works once, for 24 hours):\n\n{{link}}\n\nIf you did not ask for this, ignore this mail.\n",
    html: page(
      [
        "Hello {{username}},",
        "Open this link to make {{email}} your account's address (it works once, for 24 hours).",
        "If you did not ask for this, ignore this mail.",
      ],
      "{{link}}",
    ),
  },
  email_changed: {
    subject: "Your {{product}} e-mail address is changing",
    text: "Hello {{username}},\n\nYour {{product}} account's address was changed to {{email}}. Mail about the account goes there from now on.\n\nIf this was not you, tell your administrator at once.\n",
    html: page([
      "Hello {{username}},",
      "Your {{product}} account's address was changed to {{email}}. Mail about the account goes there from now on.",
      "If this was not you, tell your administrator at once.",
    ]),
  },
};
