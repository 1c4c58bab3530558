// The SQLite tables svc keeps of its own work: the database's identity, the table versions caches ask,
// the audit log, the answers kept for Idempotency-Key retries, and the mail owed and sent (the outbox).
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { AuditAction } from "../../../audit/actions.ts";
import type { AuditEvent } from "../../records.ts";
import { lifetime } from "./columns.ts";

/**
 * This database's identity (`id`), made once when the database is and kept across restore and `svc copy`: the
 * snapshots at a backup destination that are this database's carry it in their names. And its event log's epoch,
 * made anew by a restore or a copy (whose event numbers go on from another history): a cursor carries it, so a
 * cursor from another database or from a history discarded is told apart (RESYNC).
 */
export const svcDatabase = sqliteTable("svc_database", {
  id: text("id").primaryKey(),
  epoch: text("epoch"),
});

/** A counter per table, bumped by triggers on every write (see the custom migration): caches ask it. */
export const tableVersions = sqliteTable("table_versions", {
  name: text("name").primaryKey(),
  version: integer("version").notNull(),
});

/**
 * Who did what: one row per event, written in the same transaction as the change it records. Actor
 * and target are ids without foreign keys, so the record outlives the accounts it names.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    /** UUIDv7: id order is time order, newest last. */
    id: text("id").primaryKey(),
    at: text("at").notNull(),
    action: text("action").$type<AuditAction>().notNull(),
    actorId: text("actor_id"),
    /** A user's id, or a category's for category events. */
    targetId: text("target_id"),
    clientAddress: text("client_address"),
    requestId: text("request_id"),
    /** "success" or "failure". */
    outcome: text("outcome").$type<AuditEvent["outcome"]>().notNull(),
    /** A JSON object of non-secret particulars (the fields changed, a scope, a reason), or null. */
    detail: text("detail"),
  },
  (t) => [
    index("audit_events_at_idx").on(t.at),
    index("audit_events_action_idx").on(t.action, t.id),
    index("audit_events_actor_id_idx").on(t.actorId, t.id),
    index("audit_events_target_id_idx").on(t.targetId, t.id),
  ],
);

/**
 * Answers kept for Idempotency-Key retries: one row per caller and key (its SHA-256 digest), claimed
 * before the request runs and completed with its answer, sealed (AES-GCM) under a key only the
 * server's secret and the client's key together yield. Kept until expires_at.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** "user:<id>" or "client:<address>". */
    caller: text("caller").notNull(),
    key: text("key").notNull(),
    /** SHA-256 of the method, path and body: the same key with another request is refused. */
    fingerprint: text("fingerprint").notNull(),
    /** null while the first request runs. */
    status: integer("status"),
    answer: text("answer"),
    ...lifetime(),
    /** While the first request runs, how long its claim holds: a crashed instance's claim lapses. */
    lockedUntil: text("locked_until").notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] }), index("idempotency_keys_expires_at_idx").on(t.expiresAt)],
);

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
