// One-time password reset codes an administrator issues: at most one outstanding per user, spent by
// redeeming it in one change with the new password and a new session.
import { and, eq, gt, sql } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { dropTokensIn, PASSWORD_ENDS } from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Dialect } from "./dialect.ts";
import { USER_FIELDS } from "./records.ts";
import { columns, pruneBefore } from "./rows.ts";
import { currentToken, type NewRefreshToken, type SessionRecord } from "./sessions.ts";
import type { UserRecord } from "./records.ts";
import { ROLL_BACK, runForUser, runUndoable } from "./transactions.ts";

/** A one-time password reset code an administrator issued, as stored: its digest, never the code. */
export interface PasswordResetRecord {
  digest: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
  issuedBy: string | null;
}

/**
 * What redeeming a reset code does, besides spending it: the new password, and a new session unless the
 * account has a second factor (then the session waits for it: docs/second-factors.md).
 */
export interface Redemption {
  passwordHash: string;
  at: string;
  session?: SessionRecord;
  refresh?: NewRefreshToken;
}

export interface PasswordResetStore {
  /** Records the code (replacing the user's outstanding one) and the audit event. false: no such user. */
  issue(reset: PasswordResetRecord, audit: AuditEvent): Promise<boolean>;
  /**
   * Spends the code if it is the user's and unexpired at `redemption.at`, in one change with the rest:
   * sets the password, bumps the token version, ends every session, starts `redemption.session`,
   * stamps lastLoginAt, deletes the user's mailed e-mail change and reset tokens, records `audit`. Of
   * concurrent redemptions of one code exactly one lands.
   * "invalid": no such live code for this user; "disabled": the account is disabled (the code stays).
   */
  redeem(
    digest: string,
    userId: string,
    redemption: Redemption,
    audit: AuditEvent,
  ): Promise<UserRecord | "invalid" | "disabled">;
  /** Forgets up to `limit` codes expired at `now`; how many went. */
  prune(now: string, limit: number): Promise<number>;
  /** Whether the code with this digest is the user's and unexpired at `at`; nothing is spent. */
  live(digest: string, userId: string, at: string): Promise<boolean>;
}

export function resetStore({ db, run, write, tables, transaction }: Dialect): PasswordResetStore {
  const { passwordResets, users, sessions, refreshTokens } = tables;
  const userColumns = columns(users, USER_FIELDS);
  return {
    issue: (reset, audit) =>
      runForUser(transaction, async (tx) => {
        // One outstanding code per user: a new one replaces the last in the same statement.
        const { digest, createdAt, expiresAt, issuedBy } = reset;
        await tx
          .insert(passwordResets)
          .values(reset)
          .onConflictDoUpdate({ target: passwordResets.userId, set: { digest, createdAt, expiresAt, issuedBy } });
        await recordIn(tx, tables, audit);
      }),
    redeem(digest, userId, { passwordHash, at, session, refresh }, audit) {
      const user = parseId(userId);
      if (!user) return Promise.resolve("invalid" as const);
      return runUndoable(
        transaction,
        async (tx) => {
          const live = and(
            eq(passwordResets.digest, digest),
            eq(passwordResets.userId, user),
            gt(passwordResets.expiresAt, at),
          );
          if ((await tx.select({ digest: passwordResets.digest }).from(passwordResets).where(live)).length === 0)
            return "invalid" as const;
          // The user's row first (the order every write takes), and only while the account is active.
          const [changed] = await tx
            .update(users)
            .set({ passwordHash, updatedAt: at, lastLoginAt: at, tokenVersion: sql`${users.tokenVersion} + 1` })
            .where(and(eq(users.id, user), eq(users.status, "active")))
            .returning(userColumns);
          if (!changed) return "disabled" as const;
          // The compare-and-set: of concurrent redemptions, the one that deletes the code lands.
          if ((await tx.delete(passwordResets).where(live).returning({ digest: passwordResets.digest })).length === 0)
            throw ROLL_BACK;
          await dropTokensIn(tx, tables, user, PASSWORD_ENDS);
          await tx.delete(sessions).where(eq(sessions.userId, user));
          if (session && refresh) {
            await tx.insert(sessions).values(session);
            await tx.insert(refreshTokens).values(currentToken(refresh, session.id));
          }
          await recordIn(tx, tables, audit);
          return changed;
        },
        "invalid" as const,
      );
    },
    prune: (now, limit) =>
      write(() => pruneBefore(db, passwordResets, passwordResets.digest, passwordResets.expiresAt, now, limit)),
    live(digest, userId, at) {
      const user = parseId(userId);
      if (!user) return Promise.resolve(false);
      const live = and(
        eq(passwordResets.digest, digest),
        eq(passwordResets.userId, user),
        gt(passwordResets.expiresAt, at),
      );
      return run(
        async () => (await db.select({ digest: passwordResets.digest }).from(passwordResets).where(live)).length > 0,
      );
    },
  };
}
