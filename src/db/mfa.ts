// Second factors as stored: the authenticator app's sealed secret (one row per account, pending until its
// first code), the one-time recovery codes (by digest), and what a user's factors add up to; a login's
// second steps are in mfa-challenges.ts, what `svc copy` reads in mfa-copy.ts. Every check that must hold
// once across instances (a TOTP step, a recovery code) is one conditional statement, so of concurrent
// attempts exactly one lands.
import { lockUserIn } from "./account-token-rows.ts";
import { and, count, eq, isNotNull, isNull, lt, or } from "drizzle-orm";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { mfaChallengeStore, type MfaChallengeStore } from "./mfa-challenges.ts";
import { mfaCopy, type MfaCopy } from "./mfa-copy.ts";
import { TOTP_FIELDS, type FactorSummary, type TotpRecord } from "./mfa-records.ts";
import { USER_FIELDS, type UserRecord } from "./records.ts";
import { columns, first, withId } from "./rows.ts";
import { runForUser, TIMED } from "./transactions.ts";

export interface MfaStore extends MfaChallengeStore, MfaCopy {
  /** The user's authenticator app row, pending or confirmed; null: none. */
  totp(userId: string): Promise<TotpRecord | null>;
  /**
   * Puts a new pending enrolment in place of a pending one. false: a confirmed one stands (nothing written),
   * or the user is gone.
   */
  startTotp(record: Pick<TotpRecord, "userId" | "secretSealed" | "createdAt">): Promise<boolean>;
  /**
   * Confirms the user's pending enrolment whose sealed secret is `secretSealed` (the one its code was
   * checked against) with its first accepted `step`, replaces their recovery codes with `codes` (digests)
   * and records `audit`, in one change. false: no such enrolment is pending, e.g. a newer one replaced it
   * meanwhile (nothing written).
   */
  confirmTotp(
    userId: string,
    secretSealed: string,
    step: number,
    at: string,
    codes: string[],
    audit: AuditEvent,
  ): Promise<boolean>;
  /**
   * Accepts `step` for the user's confirmed app only if it is newer than every step accepted before: a code
   * is good once, on every instance. false: no confirmed app, or the step (or a later one) was used.
   */
  acceptStep(userId: string, step: number): Promise<boolean>;
  /**
   * Removes the user's app (pending or confirmed) and records `audit`; with no passkey left, the recovery
   * codes go too. false: there was no confirmed app (nothing written).
   */
  removeTotp(userId: string, audit: AuditEvent): Promise<boolean>;
  /** Replaces all the user's recovery codes with `codes` (digests), recording `audit`. false: the user is gone. */
  replaceRecoveryCodes(userId: string, codes: string[], at: string, audit: AuditEvent): Promise<boolean>;
  /** Spends the user's unused code with this digest: how many are left after it. null: no such unused code. */
  spendRecoveryCode(userId: string, digest: string, at: string): Promise<number | null>;
  /** The user's unused recovery codes. */
  recoveryCodesLeft(userId: string): Promise<number>;
  /** The user's confirmed or pending app, passkey count and unused recovery codes. */
  factors(userId: string): Promise<FactorSummary>;
  /**
   * Clears the user's second factors in one change with `audit` (an administrator's reset, for a lost phone):
   * the authenticator app (confirmed or waiting), the recovery codes, the passkeys, and the pending
   * challenges (a login's second step, WebAuthn challenges of theirs). null: no user has this id.
   */
  reset(userId: string, audit: AuditEvent): Promise<UserRecord | null>;
}

/** Replaces the user's recovery codes in the caller's transaction. */
async function replaceCodesIn(tx: Db, { mfaRecoveryCodes }: Tables, userId: string, codes: string[], at: string) {
  await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId));
  if (codes.length > 0)
    await tx.insert(mfaRecoveryCodes).values(codes.map((digest) => ({ digest, userId, createdAt: at, usedAt: null })));
}

export function mfaStore(dialect: Dialect): MfaStore {
  const { db, run, write, tables, transaction } = dialect;
  const { users, mfaTotp, mfaRecoveryCodes, mfaChallenges, passkeys, webauthnChallenges } = tables;
  const userColumns = columns(users, USER_FIELDS);
  const unusedOf = (user: string) => and(eq(mfaRecoveryCodes.userId, user), isNull(mfaRecoveryCodes.usedAt));
  const left = async (q: Db, user: string) =>
    (await q.select({ n: count() }).from(mfaRecoveryCodes).where(unusedOf(user)))[0]!.n;

  return {
    ...mfaChallengeStore(dialect),
    ...mfaCopy(dialect),

    totp: (userId) =>
      withId(userId, null, (user) =>
        run(async () =>
          first(await db.select(columns(mfaTotp, TOTP_FIELDS)).from(mfaTotp).where(eq(mfaTotp.userId, user))),
        ),
      ),

    startTotp: ({ userId, secretSealed, createdAt }) =>
      withId(userId, false, async (user) => {
        let started = false;
        const committed = await runForUser(transaction, async (tx) => {
          // Only a pending row is replaced: a confirmed app is turned off first, never overwritten.
          await tx.delete(mfaTotp).where(and(eq(mfaTotp.userId, user), isNull(mfaTotp.confirmedAt)));
          const kept = await tx.select({ id: mfaTotp.userId }).from(mfaTotp).where(eq(mfaTotp.userId, user));
          if (kept.length > 0) return;
          await tx.insert(mfaTotp).values({ userId: user, secretSealed, createdAt, confirmedAt: null, lastStep: null });
          started = true;
        });
        return committed && started;
      }),

    confirmTotp: (userId, secretSealed, step, at, codes, audit) =>
      withId(userId, false, (user) =>
        transaction(async (tx) => {
          // Only the enrolment whose code was checked: one started since (a secret the user never scanned)
          // must not be turned on by it.
          const confirmed = await tx
            .update(mfaTotp)
            .set({ confirmedAt: at, lastStep: step })
            .where(and(eq(mfaTotp.userId, user), eq(mfaTotp.secretSealed, secretSealed), isNull(mfaTotp.confirmedAt)))
            .returning({ id: mfaTotp.userId });
          if (confirmed.length === 0) return false;
          await replaceCodesIn(tx, tables, user, codes, at);
          await recordIn(tx, tables, audit);
          return true;
        }, TIMED),
      ),

    acceptStep: (userId, step) =>
      withId(userId, false, async (user) => {
        // The compare-and-set of RFC 6238 §5.2: only a step newer than the last accepted one moves it.
        const accepted = await write(() =>
          db
            .update(mfaTotp)
            .set({ lastStep: step })
            .where(
              and(
                eq(mfaTotp.userId, user),
                isNotNull(mfaTotp.confirmedAt),
                or(isNull(mfaTotp.lastStep), lt(mfaTotp.lastStep, step)),
              ),
            )
            .returning({ id: mfaTotp.userId }),
        );
        return accepted.length > 0;
      }),

    removeTotp: (userId, audit) =>
      withId(userId, false, (user) =>
        transaction(async (tx) => {
          // The user's row first, as a passkey's removal takes it: whichever of the two commits second sees the
          // other's, and takes the recovery codes with the last factor.
          await lockUserIn(tx, dialect, userId);
          const removed = await tx
            .delete(mfaTotp)
            .where(and(eq(mfaTotp.userId, user), isNotNull(mfaTotp.confirmedAt)))
            .returning({ id: mfaTotp.userId });
          if (removed.length === 0) return false;
          const [keys] = await tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, user));
          // With no factor left, recovery codes would recover nothing: they go with the last factor.
          if (keys!.n === 0) await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, user));
          await recordIn(tx, tables, audit);
          return true;
        }, TIMED),
      ),

    replaceRecoveryCodes: (userId, codes, at, audit) =>
      withId(userId, false, (user) =>
        runForUser(transaction, async (tx) => {
          await replaceCodesIn(tx, tables, user, codes, at);
          await recordIn(tx, tables, audit);
        }),
      ),

    spendRecoveryCode: (userId, digest, at) =>
      withId(userId, null, (user) =>
        transaction(async (tx) => {
          const spent = await tx
            .update(mfaRecoveryCodes)
            .set({ usedAt: at })
            .where(and(eq(mfaRecoveryCodes.digest, digest), unusedOf(user)))
            .returning({ digest: mfaRecoveryCodes.digest });
          return spent.length === 0 ? null : await left(tx, user);
        }, TIMED),
      ),

    recoveryCodesLeft: (userId) => withId(userId, 0, (user) => run(() => left(db, user))),

    factors: (userId) =>
      withId(userId, { totp: null, passkeys: 0, recoveryCodesLeft: 0 }, (user) =>
        run(async () => {
          const app = first(
            await db.select({ confirmedAt: mfaTotp.confirmedAt }).from(mfaTotp).where(eq(mfaTotp.userId, user)),
          );
          const [keys] = await db.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, user));
          return {
            totp: app && { confirmedAt: app.confirmedAt, pending: app.confirmedAt === null },
            passkeys: keys!.n,
            recoveryCodesLeft: await left(db, user),
          };
        }),
      ),

    reset: (userId, audit) =>
      withId(userId, null, (key) =>
        transaction(async (tx) => {
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
        }, TIMED),
      ),
  };
}
