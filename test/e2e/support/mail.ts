// What the compiled binary's mail tests share (test/e2e/mail*.test.ts): the settings that point svc at the
// test's SMTP server (test/support/smtp.ts), its certificate trusted through NODE_EXTRA_CA_CERTS, and the
// link and token a delivered mail carries, read from the message as its recipient would read it.
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Received, TestSmtp } from "../../support/smtp.ts";

export const PUBLIC_URL = "https://svc.example.com";
export const PASSWORD = "correct horse battery staple";

/** SVC_SMTP_URL (STARTTLS and AUTH), SVC_MAIL_FROM and SVC_PUBLIC_URL for `smtp`; its CA written into `dir`. */
export function mailSettings(smtp: TestSmtp, dir: string): Record<string, string> {
  const ca = join(dir, "smtp-ca.pem");
  writeFileSync(ca, smtp.ca);
  return {
    SVC_SMTP_URL: smtp.url,
    SVC_MAIL_FROM: "Acme <acme@example.com>",
    SVC_PUBLIC_URL: PUBLIC_URL,
    // Bun's TLS honours Node's variable: the one way to trust a private CA (docs/mail.md).
    NODE_EXTRA_CA_CERTS: ca,
  };
}

/** The messages the server took for `address` (by the envelope's RCPT TO). */
export const deliveredTo = (smtp: TestSmtp, address: string): Received[] =>
  smtp.received.filter((r) => r.to.includes(address));

/** The link of a delivered mail to one of svc's account pages, and the token in its fragment. */
export function linkIn(received: Received, page: string): { link: URL; token: string } {
  const text = received.mail.text ?? "";
  const found = new RegExp(`${PUBLIC_URL.replace(/\./g, "\\.")}${page}#token=[A-Za-z0-9_%-]+`).exec(text)?.[0];
  if (!found) throw new Error(`no ${page} link in the mail to ${received.to.join(", ")}: ${text}`);
  const link = new URL(found);
  // The HTML body carries the same link, so a reader of either part gets the one token.
  expect(received.mail.html || "").toContain(found);
  return { link, token: decodeURIComponent(link.hash.slice("#token=".length)) };
}

/** How many times each Message-ID arrived, for "every mail once": all counts 1. */
export function arrivals(received: Received[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of received) counts.set(r.mail.messageId ?? "", (counts.get(r.mail.messageId ?? "") ?? 0) + 1);
  return counts;
}
