// The SQLite table of mail owed and sent (the outbox).
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Mail to send: each row written in the same transaction as the change that causes it (the outbox), then
 * delivered by the sender of whichever instance claims it. Rendered when written, so a template changed
 * later does not change a mail already owed. user_id is an id without a foreign key, as in the audit log:
 * a notice outlives an account deleted meanwhile.
 */
export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    /** UUIDv7: id order is the order mails were written. */
    id: text("id").primaryKey(),
    /** Which mail this is: the template it was rendered from (verify_email, password_reset, ...). */
    kind: text("kind").notNull(),
    recipient: text("recipient").notNull(),
    userId: text("user_id"),
    subject: text("subject").notNull(),
    textBody: text("text_body").notNull(),
    htmlBody: text("html_body").notNull(),
    /** The Message-ID every attempt sends: a mail delivered twice is recognisably one mail. */
    messageId: text("message_id").notNull(),
    /** "pending", "sent" or "failed" (given up on). */
    status: text("status").$type<"pending" | "sent" | "failed">().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    createdAt: text("created_at").notNull(),
    /** When a pending mail is next due. */
    nextAttemptAt: text("next_attempt_at").notNull(),
    /** While an instance is sending it, how long its claim holds: a crashed instance's claim lapses. */
    lockedUntil: text("locked_until"),
    sentAt: text("sent_at"),
    /** The last attempt's failure, as the SMTP server or the connection said it (no secrets). */
    lastError: text("last_error"),
  },
  (t) => [
    uniqueIndex("mail_outbox_message_id_uq").on(t.messageId),
    index("mail_outbox_due_idx").on(t.status, t.nextAttemptAt),
    index("mail_outbox_sent_at_idx").on(t.status, t.sentAt),
  ],
);
