// The mail outbox: a mail is a row written in the transaction of the change that causes it, so a change
// that commits owes its mail and one that rolls back owes none. The sender (src/mail/) delivers the rows.
import {
  and,
  count,
  desc,
  eq,
  getTableColumns,
  inArray,
  isNull,
  lt,
  lte,
  or,
  type SQL,
  type SQLWrapper,
  sql,
} from "drizzle-orm";
import { NIL, parseId } from "../lib/ids.ts";
import type { AccountTokenKind } from "./account-token-rows.ts";
import { wakeAfterCommit, wakeSenders } from "./mail-wake.ts";
import { recordIn } from "./audit.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import type { AuditEvent } from "./records.ts";
import { pageAfter, pruneWhere } from "./rows.ts";
import { TIMED } from "./transactions.ts";

/** What a mail kind is named by: the template it is rendered from. */
export type MailKind = "verify_email" | "password_reset" | "password_changed" | "email_change" | "email_changed";

/**
 * The kinds whose mail carries a one-time link. It is given up on a day after it was written, when its token
 * (24 h at most) has expired: such a mail cannot be resent, the user asks for a new link.
 */
export const LINK_KINDS = ["verify_email", "password_reset", "email_change"] as const satisfies readonly MailKind[];

/** A mail as rendered, ready to be written to the outbox. */
export interface OutboxMail {
  /** UUIDv7. */
  id: string;
  kind: MailKind;
  recipient: string;
  /** The account it is about; null when none. */
  userId: string | null;
  subject: string;
  /** Sealed under the server's secret (src/mail/sealed-bodies.ts); blank once sent. */
  textBody: string;
  /** As textBody. */
  htmlBody: string;
  /** `<id@host>`: the same for every attempt. */
  messageId: string;
  createdAt: string;
}

/**
 * Kinds left to the senders' poll rather than woken for: a reset link is asked for by address, by anyone,
 * and a wake after a known address's request (a claim and an SMTP send sharing the event loop with the
 * next requests) would time which addresses have accounts. The poll comes whatever was asked (docs/mail.md).
 */
const POLLED_KINDS: ReadonlySet<MailKind> = new Set(["password_reset"]);

/** Writes the mails in the transaction of the change that causes them, due at once. */
export async function enqueueIn(tx: Db, { mailOutbox }: Tables, mails: OutboxMail | readonly OutboxMail[] | undefined) {
  const list = mails === undefined ? [] : Array.isArray(mails) ? mails : [mails as OutboxMail];
  if (list.length === 0) return;
  await tx.insert(mailOutbox).values(list.map((mail) => ({ ...mail, nextAttemptAt: mail.createdAt })));
  if (list.some((mail) => !POLLED_KINDS.has(mail.kind))) wakeAfterCommit(tx);
}

export { onMailEnqueued, wakeScheduled, wakingSenders } from "./mail-wake.ts";

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

/** What an administrator's resend came to: the mail, pending again; or why not (carries_link: LINK_KINDS). */
export type ResendOutcome = OutboxRecord | "missing" | "not_failed" | "carries_link";

/** The token a decoy pretends to issue: a digest no row has, its kind, the address asked about, its life. */
export interface DecoyToken {
  digest: string;
  kind: AccountTokenKind;
  email: string;
  createdAt: string;
  expiresAt: string;
}

export interface MailOutboxStore {
  /**
   * Issuing a one-time token with its mail, on rows that do not exist, and `audit` written, in one
   * transaction that wakes the senders as an enqueue does: for a request about an address no account in
   * need has, so that it costs and does what one for such an account does, and the timing tells nothing.
   */
  decoy(token: DecoyToken, mail: OutboxMail, audit: AuditEvent): Promise<void>;
  /** The mails the filter names, newest first. */
  list(filter: OutboxFilter): Promise<OutboxRecord[]>;
  /** Writes mails owed by no change in the same transaction (the flows use enqueueIn), due at once. */
  enqueue(mails: OutboxMail | readonly OutboxMail[]): Promise<void>;
  /**
   * Claims up to `limit` mails due at `now` (pending, next_attempt_at reached, no live claim) until
   * `leaseUntil`, oldest due first: no other claimer gets them while the claim holds. A claim that lapses
   * (its instance died while sending) makes the mail due again.
   */
  claim(now: string, leaseUntil: string, limit: number): Promise<OutboxRecord[]>;
  /** A claimed mail delivered; false when it was no longer pending. */
  markSent(id: string, at: string): Promise<boolean>;
  /** A claimed mail's attempt failed: due again at `nextAttemptAt`. False when it was no longer pending. */
  markRetry(id: string, nextAttemptAt: string, error: string): Promise<boolean>;
  /** A claimed mail given up on, with its audit event (mail.failed) in the same transaction. */
  markFailed(id: string, error: string, event: AuditEvent): Promise<boolean>;
  /**
   * A failed mail pending again, due at `now`, with a day from `now` before it is given up on once more.
   * Not one of LINK_KINDS: its token has expired, and its bodies are blank.
   */
  resend(id: string, now: string): Promise<ResendOutcome>;
  /** How many mails wait to be sent. */
  pending(): Promise<number>;
  /** Forgets up to `limit` mails sent before `before`; how many went. Failed ones stay, for a resend. */
  prune(before: string, limit: number): Promise<number>;
  /** Up to `limit` mails in id order after `after` (for `svc copy`), claims left out. */
  page(limit: number, after?: string): Promise<OutboxRecord[]>;
  /** Up to `limit` one-time tokens the mails carry (digests, never tokens), in digest order (for `svc copy`). */
  tokenPage(limit: number, after?: string): Promise<AccountTokenRow[]>;
}

/** A one-time token a mail carries, as account_tokens holds it: its digest, never the token. */
export type AccountTokenRow = Tables["accountTokens"]["$inferSelect"];

export function mailOutboxStore({ kind, db, run, write, transaction, tables }: Dialect): MailOutboxStore {
  const { mailOutbox, accountTokens } = tables;
  const { lockedUntil: _lock, ...recordColumns } = getTableColumns(mailOutbox);
  const pendingOne = (id: string) => and(eq(mailOutbox.id, id), eq(mailOutbox.status, "pending"));
  type Change = { [K in keyof typeof mailOutbox.$inferInsert]?: (typeof mailOutbox.$inferInsert)[K] | SQL };
  const settle = async (id: string, change: Change, tx: Db = db) => {
    const valid = parseId(id);
    if (!valid) return false;
    const rows = await tx
      .update(mailOutbox)
      .set({ ...change, attempts: sql`${mailOutbox.attempts} + 1`, lockedUntil: null })
      .where(pendingOne(valid))
      .returning({ id: mailOutbox.id });
    return rows.length > 0;
  };
  return {
    decoy: (token, mail, audit) =>
      transaction(async (tx) => {
        // The statements of issueIn (email-verifications.ts): the earlier tokens of the nil user (none), the
        // token and the mail by keys no row has, and the audit event both write.
        await tx.delete(accountTokens).where(and(eq(accountTokens.userId, NIL), eq(accountTokens.kind, token.kind)));
        await tx
          .update(accountTokens)
          .set({ ...token, userId: NIL })
          .where(eq(accountTokens.digest, token.digest));
        await tx.update(mailOutbox).set(mail).where(eq(mailOutbox.id, mail.id));
        await recordIn(tx, tables, audit);
        wakeAfterCommit(tx);
      }, TIMED),
    enqueue: async (mails) => {
      await write(() => enqueueIn(db, tables, mails));
      wakeSenders();
    },
    claim: (now, leaseUntil, limit) =>
      transaction(async (tx) => {
        const due = and(
          eq(mailOutbox.status, "pending"),
          lte(mailOutbox.nextAttemptAt, now),
          or(isNull(mailOutbox.lockedUntil), lte(mailOutbox.lockedUntil, now)),
        );
        const pick = tx
          .select({ id: mailOutbox.id })
          .from(mailOutbox)
          .where(due)
          .orderBy(mailOutbox.nextAttemptAt, mailOutbox.id)
          .limit(limit);
        // PostgreSQL: rows another instance is claiming are passed over rather than waited for. SQLite has
        // one writer at a time; there the UPDATE's own condition is the claim.
        const picked = await (kind === "postgres" ? pick.for("update", { skipLocked: true }) : pick);
        if (picked.length === 0) return [];
        const claimed = await tx
          .update(mailOutbox)
          .set({ lockedUntil: leaseUntil })
          .where(
            and(
              inArray(
                mailOutbox.id,
                picked.map((row) => row.id),
              ),
              due,
            ),
          )
          .returning(recordColumns);
        return (claimed as OutboxRecord[]).sort((a, b) => (a.nextAttemptAt + a.id < b.nextAttemptAt + b.id ? -1 : 1));
      }, TIMED),
    // A sent mail's bodies are of no more use, and most carry a token: blanked (the Mail view never shows them).
    markSent: (id, at) =>
      write(() => settle(id, { status: "sent", sentAt: at, lastError: null, textBody: "", htmlBody: "" })),
    markRetry: (id, nextAttemptAt, error) => write(() => settle(id, { nextAttemptAt, lastError: error })),
    markFailed: (id, error, event) =>
      transaction(async (tx) => {
        // A failed mail with a link cannot be resent (its token has expired by then): its bodies go too.
        const withLink = inArray(mailOutbox.kind, [...LINK_KINDS]);
        const blank = (body: SQLWrapper) => sql<string>`case when ${withLink} then '' else ${body} end`;
        const change = { status: "failed" as const, lastError: error };
        const failed = await settle(
          id,
          { ...change, textBody: blank(mailOutbox.textBody), htmlBody: blank(mailOutbox.htmlBody) },
          tx,
        );
        if (failed) await recordIn(tx, tables, event);
        return failed;
      }, TIMED),
    resend: (id, now) =>
      transaction(async (tx): Promise<ResendOutcome> => {
        const valid = parseId(id);
        if (!valid) return "missing";
        const [row] = await tx
          .select({ status: mailOutbox.status, kind: mailOutbox.kind })
          .from(mailOutbox)
          .where(eq(mailOutbox.id, valid))
          .limit(1);
        if (!row) return "missing";
        if (row.status === "failed" && (LINK_KINDS as readonly string[]).includes(row.kind)) return "carries_link";
        const resent = await tx
          .update(mailOutbox)
          .set({ status: "pending", nextAttemptAt: now, createdAt: now, lockedUntil: null })
          .where(and(eq(mailOutbox.id, valid), eq(mailOutbox.status, "failed")))
          .returning(recordColumns);
        if (resent.length === 0) return "not_failed";
        wakeAfterCommit(tx);
        return resent[0] as OutboxRecord;
      }, TIMED),
    pending: () =>
      run(async () => {
        const [row] = await db.select({ n: count() }).from(mailOutbox).where(eq(mailOutbox.status, "pending"));
        return Number(row?.n ?? 0);
      }),
    page: (limit, after) =>
      run(async () => {
        const rows = await pageAfter(db, mailOutbox, recordColumns, mailOutbox.id, limit, after, { ids: true });
        return rows as OutboxRecord[];
      }),
    tokenPage: (limit, after) =>
      run(() => {
        const fields = getTableColumns(accountTokens);
        return pageAfter(db, accountTokens, fields, accountTokens.digest, limit, after, { ids: false });
      }),
    prune: (before, limit) =>
      write(() => {
        const sent = and(eq(mailOutbox.status, "sent"), lt(mailOutbox.sentAt, before));
        return pruneWhere(db, mailOutbox, mailOutbox.id, sent, limit);
      }),
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
