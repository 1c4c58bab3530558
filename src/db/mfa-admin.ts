// What administration reads and clears of a user's second factors (docs/second-factors.md, "For operators"):
// whether an administrator has one and whether their session showed it (SVC_ADMIN_MFA=required), and the
// reset for a lost phone. The factors'
// own code (src/auth/mfa/, src/auth/passkeys/) writes these tables; this reads them only as a whole.
import { and, eq, isNotNull } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { lockUserIn } from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Dialect } from "./dialect.ts";
import { USER_FIELDS, type UserRecord } from "./records.ts";
import { columns, first } from "./rows.ts";
import { TIMED } from "./transactions.ts";

export interface MfaAdministration {
  /** Whether the user has a second factor: an authenticator app confirmed by a code, or any passkey. */
  hasSecondFactor(userId: string): Promise<boolean>;
  /**
   * Whether the user's session has shown a second factor (its mfa_at is set: its login's second step, a
   * passkey sign-in, the confirmation of an app, or a step-up). false: it has not, or no such session.
   */
  sessionShowedFactor(userId: string, sessionId: string): Promise<boolean>;
  /**
   * Clears the user's second factors in one change with `audit`: the authenticator app (confirmed or
   * waiting), the recovery codes, the passkeys, and the pending challenges (a login's second step, WebAuthn
   * challenges of theirs). null: no user has this id (nothing written).
   */
  reset(userId: string, audit: AuditEvent): Promise<UserRecord | null>;
}

export function mfaAdministration(dialect: Dialect): MfaAdministration {
  const { db, run, tables, transaction } = dialect;
  const { users, sessions, mfaTotp, mfaRecoveryCodes, mfaChallenges, passkeys, webauthnChallenges } = tables;
  const userColumns = columns(users, USER_FIELDS);
  return {
    hasSecondFactor(userId) {
      const key = parseId(userId);
      if (!key) return Promise.resolve(false);
      return run(async () => {
        const app = await db
          .select({ userId: mfaTotp.userId })
          .from(mfaTotp)
          .where(and(eq(mfaTotp.userId, key), isNotNull(mfaTotp.confirmedAt)))
          .limit(1);
        if (app.length > 0) return true;
        const keys = await db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.userId, key)).limit(1);
        return keys.length > 0;
      });
    },
    sessionShowedFactor(userId, sessionId) {
      const user = parseId(userId);
      const session = parseId(sessionId);
      if (!user || !session) return Promise.resolve(false);
      return run(async () => {
        const shown = await db
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.id, session), eq(sessions.userId, user), isNotNull(sessions.mfaAt)))
          .limit(1);
        return shown.length > 0;
      });
    },
    reset(userId, audit) {
      const key = parseId(userId);
      if (!key) return Promise.resolve(null);
      return transaction(async (tx) => {
        // The user's row first (the order every write takes): an enrolment running meanwhile lands before
        // or after the reset, never half of it.
        await lockUserIn(tx, dialect, key);
        const user = first(await tx.select(userColumns).from(users).where(eq(users.id, key)));
        if (!user) return null;
        await tx.delete(mfaTotp).where(eq(mfaTotp.userId, key));
        await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, key));
        await tx.delete(passkeys).where(eq(passkeys.userId, key));
        await tx.delete(mfaChallenges).where(eq(mfaChallenges.userId, key));
        await tx.delete(webauthnChallenges).where(eq(webauthnChallenges.userId, key));
        await recordIn(tx, tables, { ...audit, targetId: key });
        return user;
      }, TIMED);
    },
  };
}
