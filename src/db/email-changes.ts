// E-mail changes by mail: a request writes an email_change token for the new address and the mail to it
// in one transaction; confirming the token makes the change, writing the notice to the old address.
import { and, eq, ne } from "drizzle-orm";
import { AppError } from "../errors/index.ts";
import {
  ADDRESS_ENDS,
  type AccountTokenRecord,
  dropTokensIn,
  pruneTokens,
  replaceTokensIn,
  spendIn,
  tokenIn,
} from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Dialect } from "./dialect.ts";
import { enqueueIn, type OutboxMail } from "./mail-outbox.ts";
import { USER_FIELDS, type UserRecord } from "./records.ts";
import { columns } from "./rows.ts";
import { userClash } from "./users.ts";
import { runForUser } from "./transactions.ts";

export interface EmailChangeStore {
  /**
   * Replaces the user's earlier change tokens by `token` (its email the new address) and writes `mail`
   * (to the new address) and `audit`, in one transaction. false: the user is gone; nothing written.
   */
  request(token: AccountTokenRecord, mail: OutboxMail, audit: AuditEvent): Promise<boolean>;
  /**
   * Spends the token and changes the address to its email, verified at `at`, deletes the user's reset and
   * verification tokens (mailed to the old address), writes `notice(before, after)` (to the old address)
   * and `audit`, in one transaction. Throws AppError `email_taken` when another account has the address by
   * now; nothing changes then. "disabled": the account is disabled.
   */
  confirm(
    digest: string,
    at: string,
    notice: (before: UserRecord, after: UserRecord) => OutboxMail,
    audit: AuditEvent,
  ): Promise<UserRecord | "invalid" | "expired" | "disabled">;
  /** Forgets up to `limit` change tokens expired at `now`; how many went. */
  prune(now: string, limit: number): Promise<number>;
}

export function emailChangeStore(dialect: Dialect): EmailChangeStore {
  const { db, write, tables, transaction } = dialect;
  const { users } = tables;
  const userColumns = columns(users, USER_FIELDS);
  return {
    request: (token, mail, audit) =>
      runForUser(transaction, async (tx) => {
        await replaceTokensIn(tx, dialect, token.userId, token);
        await enqueueIn(tx, tables, mail);
        await recordIn(tx, tables, audit);
      }),
    confirm: (digest, at, notice, audit) =>
      transaction(
        async (tx) => {
          const token = await tokenIn(tx, tables, digest, "email_change", at);
          if (typeof token === "string") return token;
          const [before] = await tx.select(userColumns).from(users).where(eq(users.id, token.userId));
          if (!before || before.status !== "active") return "disabled" as const;
          const [taken] = await tx
            .select({ id: users.id })
            .from(users)
            .where(and(eq(users.email, token.email), ne(users.id, before.id)));
          if (taken) throw new AppError("email_taken", "Another account has this address by now.");
          const [after] = await tx
            .update(users)
            .set({ email: token.email, emailVerifiedAt: at, updatedAt: at })
            .where(eq(users.id, before.id))
            .returning(userColumns);
          // Spent by a concurrent confirmation meanwhile: its change stands, this one is refused.
          if (!after || !(await spendIn(tx, tables, digest))) throw new AppError("invalid_mail_token", SPENT);
          await dropTokensIn(tx, tables, after.id, ADDRESS_ENDS);
          await enqueueIn(tx, tables, notice(before, after));
          await recordIn(tx, tables, { ...audit, actorId: after.id, targetId: after.id });
          return after;
        },
        // A clash with an account that took the address in between: the same 409, nothing changed.
        { timed: true, clash: userClash },
      ),
    prune: (now, limit) => write(() => pruneTokens(db, tables, "email_change", now, limit)),
  };
}

const SPENT = "This link was used already; ask for a new one.";
