// Mails rendered from their templates, ready for the outbox: the built-in ones (built-in.ts), or those an
// SVC_MAIL_TEMPLATES folder replaces (templates.ts, read and checked at start into config.mail.templates).
import type { MailConfig } from "../config/index.ts";
import type { MailKind, OutboxMail } from "../db/mail-outbox.ts";
import { sealBodies } from "./sealed-bodies.ts";
import { render, type TemplateOverrides, templatesWith } from "./templates.ts";

/** What a template may use. `link` for the mails that carry one; `email` the new address of a change. */
export interface MailVariables {
  username: string;
  link?: string;
  email?: string;
}

export interface Composer {
  /** The mail of this kind to `to`, about the account `userId`, rendered now, its bodies sealed (sealed-bodies.ts). */
  compose(kind: MailKind, to: { address: string; userId: string | null }, variables: MailVariables): OutboxMail;
}

export function createComposer(
  /** `secret`: the server's (config.jwt.secret), which the bodies are sealed under. */
  config: Pick<MailConfig, "productName" | "publicUrl"> & { templates?: TemplateOverrides; secret: Uint8Array },
  now = () => Date.now(),
): Composer {
  const host = new URL(config.publicUrl).hostname || "localhost";
  const templates = templatesWith(config.templates ?? {});
  return {
    compose(kind, to, variables) {
      const values = { ...variables, product: config.productName };
      const { subject, text, html } = templates[kind];
      const id = Bun.randomUUIDv7();
      const mail: OutboxMail = {
        id,
        kind,
        recipient: to.address,
        userId: to.userId,
        subject: render(subject, "subject", values),
        textBody: render(text, "text", values),
        htmlBody: render(html, "html", values),
        messageId: `<${id}@${host}>`,
        createdAt: new Date(now()).toISOString(),
      };
      return sealBodies(mail, config.secret);
    },
  };
}
