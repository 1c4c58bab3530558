// The tables svc keeps of its own work: the database's identity, the table versions caches ask,
// the audit log, the answers kept for Idempotency-Key retries, and the mail owed and sent (the outbox).
import type { AuditAction } from "../../audit/actions.ts";
import type { AuditEvent } from "../records.ts";
import { lifetime } from "./accounts.ts";
import type { Kit } from "./kit.ts";

export function bookkeepingTables(c: Kit) {
  /**
   * This database's identity (`id`), made once when the database is and kept across restore and `svc copy`: the
   * snapshots at a backup destination that are this database's carry it in their names. And its event log's epoch,
   * made anew by a restore or a copy (whose event numbers go on from another history): a cursor carries it, so a
   * cursor from another database or from a history discarded is told apart (RESYNC).
   */
  const svcDatabase = c.table("svc_database", {
    id: c.text("id").primaryKey(),
    epoch: c.text("epoch"),
  });

  /** A counter per table, bumped by triggers on every write (see the custom migration): caches ask it. */
  const tableVersions = c.table("table_versions", {
    name: c.text("name").primaryKey(),
    version: c.integer("version").notNull(),
  });

  /**
   * Who did what: one row per event, written in the same transaction as the change it records. Actor
   * and target are ids without foreign keys, so the record outlives the accounts it names.
   */
  const auditEvents = c.table(
    "audit_events",
    {
      /** UUIDv7: id order is time order, newest last. */
      id: c.id("id").primaryKey(),
      at: c.instant("at").notNull(),
      action: c.text("action").$type<AuditAction>().notNull(),
      actorId: c.id("actor_id"),
      /** A user's id, or a category's for category events. */
      targetId: c.id("target_id"),
      clientAddress: c.text("client_address"),
      requestId: c.text("request_id"),
      /** "success" or "failure". */
      outcome: c.text("outcome").$type<AuditEvent["outcome"]>().notNull(),
      /** A JSON object of non-secret particulars (the fields changed, a scope, a reason), or null. */
      detail: c.text("detail"),
    },
    (t) => [
      c.index("audit_events_at_idx").on(t.at),
      c.index("audit_events_action_idx").on(t.action, t.id),
      c.index("audit_events_actor_id_idx").on(t.actorId, t.id),
      c.index("audit_events_target_id_idx").on(t.targetId, t.id),
    ],
  );

  /**
   * Answers kept for Idempotency-Key retries: one row per caller and key (its SHA-256 digest), claimed
   * before the request runs and completed with its answer, sealed (AES-GCM) under a key only the
   * server's secret and the client's key together yield. Kept until expires_at.
   */
  const idempotencyKeys = c.table(
    "idempotency_keys",
    {
      /** "user:<id>" or "client:<address>". */
      caller: c.text("caller").notNull(),
      key: c.text("key").notNull(),
      /** SHA-256 of the method, path and body: the same key with another request is refused. */
      fingerprint: c.text("fingerprint").notNull(),
      /** null while the first request runs. */
      status: c.integer("status"),
      answer: c.text("answer"),
      ...lifetime(c),
      /** While the first request runs, how long its claim holds: a crashed instance's claim lapses. */
      lockedUntil: c.instant("locked_until").notNull(),
    },
    (t) => [c.primaryKey(t.caller, t.key), c.index("idempotency_keys_expires_at_idx").on(t.expiresAt)],
  );

  /**
   * Mail to send: each row written in the same transaction as the change that causes it (the outbox), then
   * delivered by the sender of whichever instance claims it. Rendered when written, so a template changed
   * later does not change a mail already owed. user_id is an id without a foreign key, as in the audit log:
   * a notice outlives an account deleted meanwhile.
   */
  const mailOutbox = c.table(
    "mail_outbox",
    {
      /** UUIDv7: id order is the order mails were written. */
      id: c.id("id").primaryKey(),
      /** Which mail this is: the template it was rendered from (verify_email, password_reset, ...). */
      kind: c.text("kind").notNull(),
      recipient: c.text("recipient").notNull(),
      userId: c.id("user_id"),
      subject: c.text("subject").notNull(),
      textBody: c.text("text_body").notNull(),
      htmlBody: c.text("html_body").notNull(),
      /** The Message-ID every attempt sends: a mail delivered twice is recognisably one mail. */
      messageId: c.text("message_id").notNull(),
      /** "pending", "sent" or "failed" (given up on). */
      status: c.text("status").$type<"pending" | "sent" | "failed">().notNull().default("pending"),
      attempts: c.integer("attempts").notNull().default(0),
      createdAt: c.instant("created_at").notNull(),
      /** When a pending mail is next due. */
      nextAttemptAt: c.instant("next_attempt_at").notNull(),
      /** While an instance is sending it, how long its claim holds: a crashed instance's claim lapses. */
      lockedUntil: c.instant("locked_until"),
      sentAt: c.instant("sent_at"),
      /** The last attempt's failure, as the SMTP server or the connection said it (no secrets). */
      lastError: c.text("last_error"),
    },
    (t) => [
      c.uniqueIndex("mail_outbox_message_id_uq").on(t.messageId),
      c.index("mail_outbox_due_idx").on(t.status, t.nextAttemptAt),
      c.index("mail_outbox_sent_at_idx").on(t.status, t.sentAt),
    ],
  );

  return { svcDatabase, tableVersions, auditEvents, idempotencyKeys, mailOutbox };
}
