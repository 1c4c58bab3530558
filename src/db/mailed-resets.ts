// Password resets by mail: a request writes the token and its mail in one transaction; redeeming the
// token sets the password, ends every session and writes the "password changed" notice in another.
import { and, eq, sql } from "drizzle-orm";
import { NIL } from "../lib/ids.ts";
import {
  type AccountTokenRecord,
  dropTokensIn,
  PASSWORD_ENDS,
  pruneTokens,
  replaceTokensIn,
  spendIn,
  tokenIn,
} from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Dialect } from "./dialect.ts";
import { enqueueIn, type OutboxMail } from "./mail-outbox.ts";
import { USER_FIELDS, type UserRecord } from "./records.ts";
import type { Redemption } from "./resets.ts";
import { columns } from "./rows.ts";
import { currentToken } from "./sessions.ts";
import { ROLL_BACK, runForUser, runUndoable } from "./transactions.ts";

export interface MailedResetStore {
  /**
   * With `send`: replaces the user's earlier reset tokens by `token` and writes `mail` and `audit`, in one
   * transaction. Without (no account has the address): statements of the same shapes and values that find
   * nothing to change, and `audit`, so that both cost about the same (bench/reset-request.ts). false: the
   * user was deleted meanwhile; nothing written.
   */
  request(token: AccountTokenRecord, mail: OutboxMail, audit: AuditEvent, send: boolean): Promise<boolean>;
  /** The live reset token by this digest: "invalid" (unknown, spent, replaced, another kind) or "expired" at `at`. */
  find(digest: string, at: string): Promise<"invalid" | "expired" | AccountTokenRecord>;
  /**
   * Spends the token, in one change with the rest: sets the password, bumps the token version, ends every
   * session and starts `redemption.session` (if any), stamps lastLoginAt, marks the address verified, deletes the
   * user's pending e-mail change and reset tokens, writes `notice(user)` and `audit`. Of concurrent
   * redemptions one lands. "invalid" too when the token went to an address the account no longer has.
   * "disabled": the account is disabled (the token stays).
   */
  redeem(
    digest: string,
    redemption: Redemption,
    notice: (user: UserRecord) => OutboxMail,
    audit: AuditEvent,
  ): Promise<UserRecord | "invalid" | "expired" | "disabled">;
  /** Forgets up to `limit` reset tokens expired at `now`; how many went. */
  prune(now: string, limit: number): Promise<number>;
}

export function mailedResetStore(dialect: Dialect): MailedResetStore {
  const { db, run, write, tables, transaction } = dialect;
  const { users, sessions, refreshTokens, accountTokens, mailOutbox } = tables;
  const userColumns = columns(users, USER_FIELDS);
  return {
    // The account went while the request ran: as if it had never been.
    request: (token, mail, audit, send) =>
      runForUser(transaction, async (tx) => {
        if (send) {
          await replaceTokensIn(tx, dialect, token.userId, token);
          await enqueueIn(tx, tables, mail);
        } else {
          // The same work on rows that do not exist: the nil user's tokens, and the two rows by their keys.
          await replaceTokensIn(tx, dialect, NIL, null);
          await tx.update(accountTokens).set(token).where(eq(accountTokens.digest, token.digest));
          await tx.update(mailOutbox).set(mail).where(eq(mailOutbox.id, mail.id));
        }
        await recordIn(tx, tables, audit);
      }),
    find: (digest, at) => run(() => tokenIn(db, tables, digest, "password_reset", at)),
    redeem: (digest, { passwordHash, at, session, refresh }, notice, audit) =>
      runUndoable(
        transaction,
        async (tx) => {
          const token = await tokenIn(tx, tables, digest, "password_reset", at);
          if (typeof token === "string") return token;
          const [before] = await tx.select(userColumns).from(users).where(eq(users.id, token.userId));
          // A link mailed to an address the account no longer has proves nothing of its owner of now.
          if (before && token.email !== before.email) return "invalid" as const;
          if (!before || before.status !== "active") return "disabled" as const;
          const [changed] = await tx
            .update(users)
            .set({
              passwordHash,
              updatedAt: at,
              lastLoginAt: at,
              // The mail reached the account's address: that proves the address is the owner's.
              emailVerifiedAt: before.emailVerifiedAt ?? at,
              tokenVersion: sql`${users.tokenVersion} + 1`,
            })
            .where(and(eq(users.id, token.userId), eq(users.status, "active")))
            .returning(userColumns);
          if (!changed) return "disabled" as const;
          if (!(await spendIn(tx, tables, digest))) throw ROLL_BACK;
          await dropTokensIn(tx, tables, token.userId, PASSWORD_ENDS);
          await tx.delete(sessions).where(eq(sessions.userId, token.userId));
          if (session && refresh) {
            await tx.insert(sessions).values(session);
            await tx.insert(refreshTokens).values(currentToken(refresh, session.id));
          }
          await enqueueIn(tx, tables, notice(changed));
          await recordIn(tx, tables, { ...audit, actorId: changed.id, targetId: changed.id });
          return changed;
        },
        "invalid" as const,
      ),
    prune: (now, limit) => write(() => pruneTokens(db, tables, "password_reset", now, limit)),
  };
}
