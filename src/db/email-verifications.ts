// E-mail verification: one-time tokens mailed to a user's address (kept as SHA-256 digests in
// account_tokens, kind "email_verification"), each issued in one change with its mail (the outbox) and
// its audit event; redeemed by the link's owner, or overridden by an administrator who marks the
// address verified. Either sets users.email_verified_at, which the users table's version covers.
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { lockUserIn, pruneTokens } from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { enqueueIn, type OutboxMail } from "./mail-outbox.ts";
import { USER_FIELDS, type UserRecord } from "./records.ts";
import { columns, first } from "./rows.ts";
import { ROLL_BACK, runForUser, runUndoable, TIMED } from "./transactions.ts";

const KIND = "email_verification";

/** A verification token as stored: its digest (never the token), the address it was sent to, and its life. */
export interface VerificationToken {
  digest: string;
  userId: string;
  /** The address the mail went to: the token verifies that one only, while it is still the user's. */
  email: string;
  createdAt: string;
  expiresAt: string;
}

/** What issuing writes in one change: the token, the mail that carries it, and the audit event. */
export interface VerificationIssue {
  token: VerificationToken;
  mail: OutboxMail;
  audit: AuditEvent;
}

export interface EmailVerificationStore {
  /**
   * Replaces the user's earlier verification tokens with this one, in one change with its mail and audit
   * event, so a mail is owed exactly when its token stands. false: no user has that id (nothing written).
   */
  issue(issue: VerificationIssue): Promise<boolean>;
  /**
   * Spends the token with this digest, if it is a verification token unexpired at `at` whose address is
   * still its user's: sets the user's emailVerifiedAt (kept if already set), deletes every verification
   * token of theirs, records `audit` (its targetId set to the user), in one change. Of concurrent
   * redemptions of one token exactly one lands. "invalid": no such token (unknown, spent, replaced, of
   * another kind, or for an address the user no longer has); "expired": it is past its expiry. Either
   * way nothing is written.
   */
  redeem(digest: string, at: string, audit: AuditEvent): Promise<UserRecord | "invalid" | "expired">;
  /**
   * Marks the user's address verified at `at` (an administrator's word), deleting their verification
   * tokens and recording `audit`, in one change. An address already verified stays as it is, and nothing
   * is written. null: no user has this id.
   */
  mark(userId: string, at: string, audit: AuditEvent): Promise<UserRecord | null>;
  /** Forgets up to `limit` verification tokens expired at `now`; how many went. */
  prune(now: string, limit: number): Promise<number>;
}

/**
 * Writes the issue in the caller's transaction: the user's earlier tokens go, this one, its mail and event come.
 * With `lock` (a user made before this transaction), the user's row is locked first, so that concurrent issues
 * take turns and one token stands (lockUserIn); a user inserted by the caller's transaction is locked already.
 */
export async function issueIn(
  tx: Db,
  tables: Tables,
  { token, mail, audit }: VerificationIssue,
  lock?: Pick<Dialect, "kind">,
): Promise<void> {
  const { accountTokens } = tables;
  if (lock) await lockUserIn(tx, { kind: lock.kind, tables }, token.userId);
  await tx.delete(accountTokens).where(and(eq(accountTokens.userId, token.userId), eq(accountTokens.kind, KIND)));
  await tx.insert(accountTokens).values({ ...token, kind: KIND });
  await enqueueIn(tx, tables, mail);
  await recordIn(tx, tables, audit);
}

export function emailVerificationStore(dialect: Dialect): EmailVerificationStore {
  const { db, write, tables, transaction } = dialect;
  const { accountTokens, users } = tables;
  const userColumns = columns(users, USER_FIELDS);
  const usersTokens = (userId: string) => and(eq(accountTokens.userId, userId), eq(accountTokens.kind, KIND));
  return {
    issue: (issue) => runForUser(transaction, (tx) => issueIn(tx, tables, issue, dialect)),
    redeem: (digest, at, audit) =>
      runUndoable(
        transaction,
        async (tx) => {
          const token = first(
            await tx
              .select({ userId: accountTokens.userId, email: accountTokens.email, expiresAt: accountTokens.expiresAt })
              .from(accountTokens)
              .where(and(eq(accountTokens.digest, digest), eq(accountTokens.kind, KIND))),
          );
          if (!token) return "invalid" as const;
          if (token.expiresAt <= at) return "expired" as const;
          // The user's row first (the order every write takes), and only while the address is the one mailed.
          const verified = first(
            await tx
              .update(users)
              .set({ emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, ${at})`, updatedAt: at })
              .where(and(eq(users.id, token.userId), eq(users.email, token.email)))
              .returning(userColumns),
          );
          if (!verified) return "invalid" as const;
          // The compare-and-set: of concurrent redemptions, the one that deletes the token lands.
          const spent = await tx
            .delete(accountTokens)
            .where(and(eq(accountTokens.digest, digest), gt(accountTokens.expiresAt, at)))
            .returning({ digest: accountTokens.digest });
          if (spent.length === 0) throw ROLL_BACK;
          await tx.delete(accountTokens).where(usersTokens(token.userId));
          await recordIn(tx, tables, { ...audit, targetId: token.userId });
          return verified;
        },
        "invalid" as const,
      ),
    mark(userId, at, audit) {
      const key = parseId(userId);
      if (!key) return Promise.resolve(null);
      return transaction(async (tx) => {
        const user = first(await tx.select(userColumns).from(users).where(eq(users.id, key)));
        if (!user || user.emailVerifiedAt !== null) return user;
        const marked = first(
          await tx
            .update(users)
            .set({ emailVerifiedAt: at, updatedAt: at })
            .where(and(eq(users.id, key), isNull(users.emailVerifiedAt)))
            .returning(userColumns),
        );
        // Verified meanwhile (a redemption that landed between the two statements): as it stands.
        if (!marked) return first(await tx.select(userColumns).from(users).where(eq(users.id, key)));
        await tx.delete(accountTokens).where(usersTokens(key));
        await recordIn(tx, tables, audit);
        return marked;
      }, TIMED);
    },
    prune: (now, limit) => write(() => pruneTokens(db, tables, KIND, now, limit)),
  };
}
