// A login's second step as stored (by the digest of its mfa_token), and the second factor a session showed
// (sessions.amr, sessions.mfa_at). Spending a step, or counting a wrong code against it, is one conditional
// statement, so of concurrent attempts exactly one lands.
import { and, eq, gt, lt, isNull, sql } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import type { Dialect } from "./dialect.ts";
import { CHALLENGE_FIELDS, type MfaChallengeRecord } from "./mfa-records.ts";
import { columns, first, pruneBefore, withId } from "./rows.ts";
import { runForUser } from "./transactions.ts";

/** How many wrong codes spend an mfa_token. */
export const MFA_TOKEN_FAILURES = 5;

export interface MfaChallengeStore {
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
}

export function mfaChallengeStore({ db, run, write, transaction, tables }: Dialect): MfaChallengeStore {
  const { mfaChallenges, sessions } = tables;
  /** A second step neither used nor spent by wrong codes. */
  const unspent = and(isNull(mfaChallenges.usedAt), lt(mfaChallenges.failures, MFA_TOKEN_FAILURES));
  /** The user's session, when both ids can be ids. */
  const sessionOf = (userId: string, sessionId: string) => {
    const [user, session] = [parseId(userId), parseId(sessionId)];
    return user && session ? and(eq(sessions.id, session), eq(sessions.userId, user)) : null;
  };

  return {
    createChallenge: (challenge) =>
      withId(challenge.userId, false, (user) =>
        runForUser(transaction, async (tx) => {
          await tx.delete(mfaChallenges).where(eq(mfaChallenges.digest, challenge.digest));
          await tx.insert(mfaChallenges).values({ ...challenge, userId: user, failures: 0, usedAt: null });
        }),
      ),

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
      write(() => pruneBefore(db, mfaChallenges, mfaChallenges.digest, mfaChallenges.expiresAt, now, limit)),

    sessionFactor(userId, sessionId) {
      const session = sessionOf(userId, sessionId);
      if (!session) return Promise.resolve(null);
      return run(async () =>
        first(await db.select({ amr: sessions.amr, mfaAt: sessions.mfaAt }).from(sessions).where(session)),
      );
    },

    async markSession(userId, sessionId, at) {
      const session = sessionOf(userId, sessionId);
      if (!session) return false;
      const marked = await write(() =>
        db.update(sessions).set({ mfaAt: at }).where(session).returning({ id: sessions.id }),
      );
      return marked.length > 0;
    },
  };
}
