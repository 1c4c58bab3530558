// Second factors as stored: the authenticator app's sealed secret (one row per account, pending until its
// first code), the one-time recovery codes and the login's second steps (both by digest), what a user's
// factors add up to, and the second factor a session showed (sessions.amr, sessions.mfa_at). Every check
// that must hold once across instances (a TOTP step, a recovery code, an mfa_token) is one conditional
// statement, so of concurrent attempts exactly one lands.
import { lockUserIn } from "./account-token-rows.ts";
import { and, count, eq, gt, inArray, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { USER_FIELDS, type UserRecord } from "./records.ts";
import { columns, first } from "./rows.ts";
import { runForUser, TIMED } from "./transactions.ts";

/** An authenticator app's row: pending (confirmedAt null) until its first code, then the account's factor. */
export interface TotpRecord {
  userId: string;
  /** The base32 secret, sealed under the server's secret. */
  secretSealed: string;
  createdAt: string;
  confirmedAt: string | null;
  /** The newest 30-second step a code was accepted for; null: none yet. */
  lastStep: number | null;
}

/** A recovery code as stored: its SHA-256 digest, never the code. */
export interface RecoveryCodeRecord {
  digest: string;
  userId: string;
  createdAt: string;
  usedAt: string | null;
}

/** A login's second step, by the digest of its mfa_token. */
export interface MfaChallengeRecord {
  digest: string;
  userId: string;
  mode: "json" | "cookie";
  /** What the first step proved, RFC 8176's name ("pwd"). */
  firstFactor: string;
  /** The WebAuthn challenge offered with it; null without passkeys. */
  webauthnChallenge: string | null;
  failures: number;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** A passkey row, as `svc copy` moves it (the passkey code, src/auth/passkeys/, reads and writes them). */
export interface PasskeyRow {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string | null;
  deviceType: string;
  backedUp: number;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** What a user's second factors add up to. */
export interface FactorSummary {
  totp: { confirmedAt: string | null; pending: boolean } | null;
  passkeys: number;
  recoveryCodesLeft: number;
}

/** How many second-factor rows a database holds: what `svc copy` checks besides users and categories. */
export interface FactorCounts {
  totp: number;
  recoveryCodes: number;
  passkeys: number;
}

/** The second-factor rows, within a transaction or not. */
export async function factorCountsIn(db: Db, { mfaTotp, mfaRecoveryCodes, passkeys }: Tables): Promise<FactorCounts> {
  const [totp] = await db.select({ n: count() }).from(mfaTotp);
  const [recoveryCodes] = await db.select({ n: count() }).from(mfaRecoveryCodes);
  const [keys] = await db.select({ n: count() }).from(passkeys);
  return { totp: totp!.n, recoveryCodes: recoveryCodes!.n, passkeys: keys!.n };
}

/** How many wrong codes spend an mfa_token. */
export const MFA_TOKEN_FAILURES = 5;

export interface MfaStore {
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
  /** Stores a second step, in place of any with the same digest (a step-up's, named by its session). false: the user is gone. */
  createChallenge(challenge: Omit<MfaChallengeRecord, "failures" | "usedAt">): Promise<boolean>;
  /** The second step with this digest, whatever its state. */
  challenge(digest: string): Promise<MfaChallengeRecord | null>;
  /**
   * Counts a wrong code against the unspent second step; the MFA_TOKEN_FAILURES-th spends it. Its failures
   * now; null: it was spent already (or is unknown).
   */
  failChallenge(digest: string): Promise<number | null>;
  /** Spends the second step, if still unspent and unexpired at `at`: of concurrent spends one lands. */
  spendChallenge(digest: string, at: string): Promise<boolean>;
  /** Forgets up to `limit` second steps expired at `now`; how many went. */
  pruneChallenges(now: string, limit: number): Promise<number>;
  /** The amr and mfaAt of the user's session; null: they have no such session. */
  sessionFactor(userId: string, sessionId: string): Promise<{ amr: string; mfaAt: string | null } | null>;
  /** Records that the user's session showed a second factor at `at` (a step-up). false: no such session. */
  markSession(userId: string, sessionId: string, at: string): Promise<boolean>;
  /**
   * Clears the user's second factors in one change with `audit` (an administrator's reset, for a lost phone):
   * the authenticator app (confirmed or waiting), the recovery codes, the passkeys, and the pending
   * challenges (a login's second step, WebAuthn challenges of theirs). null: no user has this id.
   */
  reset(userId: string, audit: AuditEvent): Promise<UserRecord | null>;
  /** For `svc copy`: how many app rows (pending too), recovery codes and passkeys there are. */
  counts(): Promise<FactorCounts>;
  /** For `svc copy`: every app row, every recovery code and every passkey, in key order after `after`. */
  totpPage(limit: number, after?: string): Promise<TotpRecord[]>;
  recoveryCodePage(limit: number, after?: string): Promise<RecoveryCodeRecord[]>;
  passkeyPage(limit: number, after?: string): Promise<PasskeyRow[]>;
}

const TOTP_FIELDS = ["userId", "secretSealed", "createdAt", "confirmedAt", "lastStep"] as const;
const RECOVERY_FIELDS = ["digest", "userId", "createdAt", "usedAt"] as const;
const CHALLENGE_FIELDS = [
  "digest",
  "userId",
  "mode",
  "firstFactor",
  "webauthnChallenge",
  "failures",
  "createdAt",
  "expiresAt",
  "usedAt",
] as const;
export const PASSKEY_FIELDS = [
  "id",
  "userId",
  "credentialId",
  "publicKey",
  "counter",
  "transports",
  "deviceType",
  "backedUp",
  "name",
  "createdAt",
  "lastUsedAt",
] as const satisfies readonly (keyof PasskeyRow)[];

/** Replaces the user's recovery codes in the caller's transaction. */
async function replaceCodesIn(tx: Db, { mfaRecoveryCodes }: Tables, userId: string, codes: string[], at: string) {
  await tx.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.userId, userId));
  if (codes.length > 0)
    await tx.insert(mfaRecoveryCodes).values(codes.map((digest) => ({ digest, userId, createdAt: at, usedAt: null })));
}

export function mfaStore(dialect: Dialect): MfaStore {
  const { db, run, write, tables, transaction } = dialect;
  const { users, mfaTotp, mfaRecoveryCodes, mfaChallenges, passkeys, sessions, webauthnChallenges } = tables;
  const userColumns = columns(users, USER_FIELDS);
  const unusedOf = (user: string) => and(eq(mfaRecoveryCodes.userId, user), isNull(mfaRecoveryCodes.usedAt));
  const left = async (q: Db, user: string) =>
    (await q.select({ n: count() }).from(mfaRecoveryCodes).where(unusedOf(user)))[0]!.n;
  const none = <T>(value: T) => Promise.resolve(value);
  /** A second step neither used nor spent by wrong codes. */
  const unspent = and(isNull(mfaChallenges.usedAt), lt(mfaChallenges.failures, MFA_TOKEN_FAILURES));

  return {
    totp(userId) {
      const user = parseId(userId);
      if (!user) return none(null);
      return run(async () =>
        first(await db.select(columns(mfaTotp, TOTP_FIELDS)).from(mfaTotp).where(eq(mfaTotp.userId, user))),
      );
    },

    async startTotp({ userId, secretSealed, createdAt }) {
      const user = parseId(userId);
      if (!user) return false;
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
    },

    async confirmTotp(userId, secretSealed, step, at, codes, audit) {
      const user = parseId(userId);
      if (!user) return false;
      return transaction(async (tx) => {
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
      }, TIMED);
    },

    async acceptStep(userId, step) {
      const user = parseId(userId);
      if (!user) return false;
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
    },

    async removeTotp(userId, audit) {
      const user = parseId(userId);
      if (!user) return false;
      return transaction(async (tx) => {
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
      }, TIMED);
    },

    async replaceRecoveryCodes(userId, codes, at, audit) {
      const user = parseId(userId);
      if (!user) return false;
      return runForUser(transaction, async (tx) => {
        await replaceCodesIn(tx, tables, user, codes, at);
        await recordIn(tx, tables, audit);
      });
    },

    async spendRecoveryCode(userId, digest, at) {
      const user = parseId(userId);
      if (!user) return null;
      return transaction(async (tx) => {
        const spent = await tx
          .update(mfaRecoveryCodes)
          .set({ usedAt: at })
          .where(and(eq(mfaRecoveryCodes.digest, digest), unusedOf(user)))
          .returning({ digest: mfaRecoveryCodes.digest });
        return spent.length === 0 ? null : await left(tx, user);
      }, TIMED);
    },

    recoveryCodesLeft(userId) {
      const user = parseId(userId);
      return user ? run(() => left(db, user)) : none(0);
    },

    factors(userId) {
      const user = parseId(userId);
      if (!user) return none({ totp: null, passkeys: 0, recoveryCodesLeft: 0 });
      return run(async () => {
        const app = first(
          await db.select({ confirmedAt: mfaTotp.confirmedAt }).from(mfaTotp).where(eq(mfaTotp.userId, user)),
        );
        const [keys] = await db.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, user));
        return {
          totp: app && { confirmedAt: app.confirmedAt, pending: app.confirmedAt === null },
          passkeys: keys!.n,
          recoveryCodesLeft: await left(db, user),
        };
      });
    },

    async createChallenge(challenge) {
      const user = parseId(challenge.userId);
      if (!user) return false;
      return runForUser(transaction, async (tx) => {
        await tx.delete(mfaChallenges).where(eq(mfaChallenges.digest, challenge.digest));
        await tx.insert(mfaChallenges).values({ ...challenge, userId: user, failures: 0, usedAt: null });
      });
    },

    challenge: (digest) =>
      run(async () =>
        first(
          await db
            .select(columns(mfaChallenges, CHALLENGE_FIELDS))
            .from(mfaChallenges)
            .where(eq(mfaChallenges.digest, digest)),
        ),
      ),

    async failChallenge(digest) {
      // The last allowed failure spends it in the same statement: no sixth guess slips in between.
      const failed = await write(() =>
        db
          .update(mfaChallenges)
          .set({ failures: sql`${mfaChallenges.failures} + 1` })
          .where(and(eq(mfaChallenges.digest, digest), unspent))
          .returning({ failures: mfaChallenges.failures }),
      );
      return failed[0]?.failures ?? null;
    },

    async spendChallenge(digest, at) {
      const spent = await write(() =>
        db
          .update(mfaChallenges)
          .set({ usedAt: at })
          .where(and(eq(mfaChallenges.digest, digest), unspent, gt(mfaChallenges.expiresAt, at)))
          .returning({ digest: mfaChallenges.digest }),
      );
      return spent.length > 0;
    },

    pruneChallenges: (now, limit) =>
      write(async () => {
        const expired = db
          .select({ digest: mfaChallenges.digest })
          .from(mfaChallenges)
          .where(lt(mfaChallenges.expiresAt, now))
          .limit(limit);
        return (
          await db
            .delete(mfaChallenges)
            .where(and(inArray(mfaChallenges.digest, expired), lt(mfaChallenges.expiresAt, now)))
            .returning({ digest: mfaChallenges.digest })
        ).length;
      }),

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
    sessionFactor(userId, sessionId) {
      const user = parseId(userId);
      const session = parseId(sessionId);
      if (!user || !session) return none(null);
      return run(async () =>
        first(
          await db
            .select({ amr: sessions.amr, mfaAt: sessions.mfaAt })
            .from(sessions)
            .where(and(eq(sessions.id, session), eq(sessions.userId, user))),
        ),
      );
    },

    async markSession(userId, sessionId, at) {
      const user = parseId(userId);
      const session = parseId(sessionId);
      if (!user || !session) return false;
      const marked = await write(() =>
        db
          .update(sessions)
          .set({ mfaAt: at })
          .where(and(eq(sessions.id, session), eq(sessions.userId, user)))
          .returning({ id: sessions.id }),
      );
      return marked.length > 0;
    },

    counts: () => run(() => factorCountsIn(db, tables)),

    totpPage: (limit, after) =>
      run(() => {
        const from = after === undefined ? null : parseId(after);
        return db
          .select(columns(mfaTotp, TOTP_FIELDS))
          .from(mfaTotp)
          .where(from ? gt(mfaTotp.userId, from) : undefined)
          .orderBy(mfaTotp.userId)
          .limit(limit);
      }),
    recoveryCodePage: (limit, after) =>
      run(() =>
        db
          .select(columns(mfaRecoveryCodes, RECOVERY_FIELDS))
          .from(mfaRecoveryCodes)
          .where(after === undefined ? undefined : gt(mfaRecoveryCodes.digest, after))
          .orderBy(mfaRecoveryCodes.digest)
          .limit(limit),
      ),
    passkeyPage: (limit, after) =>
      run(() => {
        const from = after === undefined ? null : parseId(after);
        return db
          .select(columns(passkeys, PASSKEY_FIELDS))
          .from(passkeys)
          .where(from ? gt(passkeys.id, from) : undefined)
          .orderBy(passkeys.id)
          .limit(limit);
      }),
  };
}
