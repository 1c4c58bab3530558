// The mail outbox: a mail is a row written in the transaction of the change that causes it, so a change
// that commits owes its mail and one that rolls back owes none. The sender (src/mail/) delivers the rows.
import type { Db, Tables } from "./dialect.ts";

/** What a mail kind is named by: the template it is rendered from. */
export type MailKind = "verify_email" | "password_reset" | "password_changed" | "email_change" | "email_changed";

/** A mail as rendered, ready to be written to the outbox. */
export interface OutboxMail {
  /** UUIDv7. */
  id: string;
  kind: MailKind;
  recipient: string;
  /** The account it is about; null when none. */
  userId: string | null;
  subject: string;
  textBody: string;
  htmlBody: string;
  /** `<id@host>`: the same for every attempt. */
  messageId: string;
  createdAt: string;
}

/** Writes the mails in the transaction of the change that causes them, due at once. */
export async function enqueueIn(tx: Db, { mailOutbox }: Tables, mails: OutboxMail | readonly OutboxMail[] | undefined) {
  const list = mails === undefined ? [] : Array.isArray(mails) ? mails : [mails as OutboxMail];
  if (list.length === 0) return;
  await tx.insert(mailOutbox).values(list.map((mail) => ({ ...mail, nextAttemptAt: mail.createdAt })));
}
