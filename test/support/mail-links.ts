// What the mail tests share: a configuration with mail off (today's behaviour), and the token a mail in
// the outbox carries in its link (the fragment's token=…), as a user would take it from their mail.
import { expect } from "bun:test";
import type { Config } from "../../src/config/index.ts";
import type { MailKind, Store } from "../../src/db/store.ts";
import { openBodies } from "../../src/mail/sealed-bodies.ts";
import { testConfig } from "../helpers.ts";

/** Mail off, as in production without SVC_SMTP_URL: a change of address is made at once. */
export function mailOff(): { mail: Config["mail"] } {
  return { mail: { ...testConfig().mail, transport: { kind: "off" }, verification: "off" } };
}

/**
 * The newest mail of this kind to this address, its bodies opened (sealed in the outbox under the server's
 * secret, the tests' own unless `secret` says), its link, and the token in the link's fragment.
 */
export async function mailedToken(
  store: Pick<Store, "mail">,
  recipient: string,
  kind: MailKind,
  secret = testConfig().jwt.secret,
) {
  const mails = (await store.mail.list({ recipient, limit: 50 })).filter((mail) => mail.kind === kind);
  expect(mails.length).toBeGreaterThan(0);
  const mail = await openBodies(mails[0]!, secret);
  if (!mail) throw new Error(`the ${kind} mail to ${recipient} is not sealed under this secret`);
  const link = /https?:\/\/\S+#token=[A-Za-z0-9_-]+/.exec(mail.textBody)?.[0];
  if (!link) throw new Error(`no link in the ${kind} mail to ${recipient}`);
  return { mail, link, token: new URL(link).hash.slice("#token=".length) };
}

/** How many mails of this kind went to the address. */
export async function mailCount(store: Pick<Store, "mail">, recipient: string, kind?: MailKind) {
  return (await store.mail.list({ recipient, limit: 1000 })).filter((mail) => kind === undefined || mail.kind === kind)
    .length;
}
