// The mail outbox: a mail is a row written in the transaction of the change that causes it, so a change
// that commits owes its mail and one that rolls back owes none. The sender (src/mail/) delivers the rows.
import { and, desc, eq, getTableColumns, lt, type SQL } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";

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

/** A mail as the outbox holds it. */
export interface OutboxRecord extends OutboxMail {
  status: "pending" | "sent" | "failed";
  attempts: number;
  nextAttemptAt: string;
  sentAt: string | null;
  lastError: string | null;
}

/** Which mails to read: newest first, at most `limit`, older than `before` (a mail id) when given. */
export interface OutboxFilter {
  status?: OutboxRecord["status"];
  recipient?: string;
  userId?: string;
  before?: string;
  limit: number;
}

export interface MailOutboxStore {
  /** The mails the filter names, newest first. */
  list(filter: OutboxFilter): Promise<OutboxRecord[]>;
}

export function mailOutboxStore({ db, run, tables }: Dialect): MailOutboxStore {
  const { mailOutbox } = tables;
  const { lockedUntil: _lock, ...recordColumns } = getTableColumns(mailOutbox);
  return {
    list: ({ status, recipient, userId, before, limit }) =>
      run(async () => {
        const conditions: SQL[] = [];
        const ids = [userId, before].map((id) => (id === undefined ? undefined : parseId(id)));
        if (ids.some((id) => id === null)) return [];
        const [user, beforeId] = ids;
        if (status) conditions.push(eq(mailOutbox.status, status));
        if (recipient) conditions.push(eq(mailOutbox.recipient, recipient.toLowerCase()));
        if (user) conditions.push(eq(mailOutbox.userId, user));
        if (beforeId) conditions.push(lt(mailOutbox.id, beforeId));
        const rows = await db
          .select(recordColumns)
          .from(mailOutbox)
          .where(and(...conditions))
          .orderBy(desc(mailOutbox.id))
          .limit(limit);
        return rows as OutboxRecord[];
      }),
  };
}
