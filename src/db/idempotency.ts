// Requests under an Idempotency-Key: claimed before they run, so that of concurrent ones exactly one
// does, completed with their sealed answer for the retries, and pruned once expired.
import { and, count, eq, gt, isNotNull, isNull, lt, min, or } from "drizzle-orm";
import type { Dialect } from "./dialect.ts";
import { first, pruneBefore } from "./rows.ts";
import { TIMED } from "./transactions.ts";

/** A request under an Idempotency-Key, as stored: claimed while it runs, then its answer (sealed). */
export interface IdempotencyRecord {
  caller: string;
  /** The key's digest. */
  key: string;
  fingerprint: string;
  /** null: the first request is still running. */
  status: number | null;
  answer: string | null;
  createdAt: string;
  expiresAt: string;
  lockedUntil: string;
}

export type IdempotencyClaim = Omit<IdempotencyRecord, "status" | "answer">;

/** What a claim got: the key, the live record that holds it, or no key (the caller holds `limit` already). */
export type IdempotencyClaimResult =
  | { claimed: true }
  | { claimed: false; held: IdempotencyRecord }
  /** `freeAt`: when the caller's oldest live record expires. */
  | { claimed: false; held: null; freeAt: string };

export interface IdempotencyStore {
  /**
   * Claims the caller's key for a request about to run, unless a live record holds it: then that
   * record. A record past its expiry, or a claim past `lockedUntil` that never completed (its instance
   * died), gives way to the new claim. Of concurrent claims, on any instance, exactly one wins. A
   * caller already holding `limit` live records (completed, or claimed within their lease) gets no new
   * one, however many claims race on however many instances.
   */
  claim(claim: IdempotencyClaim, limit: number): Promise<IdempotencyClaimResult>;
  /** The caller's record for the key, if one lives at `now`. */
  find(caller: string, key: string, now: string): Promise<IdempotencyRecord | null>;
  /** Stores the claimed request's answer. */
  complete(caller: string, key: string, status: number, answer: string): Promise<void>;
  /** Gives the claim up (the request failed in a way worth retrying): the key is free again. */
  release(caller: string, key: string): Promise<void>;
  /** Forgets up to `limit` records expired at `now`; how many went. */
  prune(now: string, limit: number): Promise<number>;
}

export function idempotencyStore({ db, run, write, tables, transaction, serialize }: Dialect): IdempotencyStore {
  const { idempotencyKeys: keys } = tables;
  const one = (caller: string, key: string) => and(eq(keys.caller, caller), eq(keys.key, key));
  /** The caller's records that still hold their place at `at`: completed and unexpired, or claimed within their lease. */
  const live = (caller: string, at: string) =>
    and(eq(keys.caller, caller), gt(keys.expiresAt, at), or(isNotNull(keys.status), gt(keys.lockedUntil, at)));
  return {
    claim: (claim, limit) =>
      transaction(async (tx) => {
        const at = claim.createdAt;
        // One caller's claims one at a time, on every instance: the count below is then the count the insert meets.
        await serialize(tx, `idempotency:${claim.caller}`);
        // A record past its expiry, or a claim whose request never finished, is no longer anyone's.
        await tx
          .delete(keys)
          .where(
            and(
              one(claim.caller, claim.key),
              or(lt(keys.expiresAt, at), and(isNull(keys.status), lt(keys.lockedUntil, at))),
            ),
          );
        const [held] = await tx.select().from(keys).where(one(claim.caller, claim.key));
        if (held) return { claimed: false as const, held };
        const [kept] = await tx
          .select({ count: count(), oldest: min(keys.expiresAt) })
          .from(keys)
          .where(live(claim.caller, at));
        if (kept && kept.count >= limit) return { claimed: false as const, held: null, freeAt: kept.oldest! };
        // Still guarded: an instance of an earlier version, mid-upgrade, claims without the lock.
        const won = await tx.insert(keys).values(claim).onConflictDoNothing().returning({ key: keys.key });
        if (won.length > 0) return { claimed: true as const };
        const [winner] = await tx.select().from(keys).where(one(claim.caller, claim.key));
        return { claimed: false as const, held: winner ?? { ...claim, status: null, answer: null } };
      }, TIMED),
    find: (caller, key, now) =>
      run(async () =>
        first(
          await db
            .select()
            .from(keys)
            .where(and(one(caller, key), gt(keys.expiresAt, now))),
        ),
      ),
    complete: (caller, key, status, answer) =>
      write(async () => {
        await db.update(keys).set({ status, answer }).where(one(caller, key));
      }),
    release: (caller, key) =>
      write(async () => {
        await db.delete(keys).where(and(one(caller, key), isNull(keys.status)));
      }),
    prune: (now, limit) => write(() => pruneBefore(db, keys, keys.key, keys.expiresAt, now, limit)),
  };
}
