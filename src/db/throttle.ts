// Failed-login state in the database, so that every instance sees the same counts: each key's
// transitions are compare-and-set, and queue behind each other within one process.
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Dialect } from "./dialect.ts";
import { first, pruneWhere } from "./rows.ts";

export interface ThrottleRecord {
  key: string;
  /** Attempts counted against the key (failures, and attempts still being checked) since the last clear. */
  failures: number;
  /** The last attempt counted; for a sign-up client's key, the first of its window (signup/throttle.ts). */
  lastFailureAt: string;
  /** null: not blocked. */
  blockedUntil: string | null;
}

/** What a throttle transition makes of a key's state, and what it tells its caller. */
export interface ThrottleTransition<T> {
  /** The new state; null forgets the key. The very `current` object: nothing is written. */
  next: ThrottleRecord | null;
  result: T;
}

/** Failed-login state, kept in the database so that every instance sees the same counts. */
export interface ThrottleStore {
  /** null: nothing recorded for this key. */
  get(key: string): Promise<ThrottleRecord | null>;
  /**
   * Reads the key's state and writes what `step` makes of it as one atomic change: no other change to
   * the key, from this instance or another, comes between the read and the write. `step` must be pure
   * and quick (it runs while the key is locked) and may run again if the store retries.
   */
  transition<T>(key: string, step: (current: ThrottleRecord | null) => ThrottleTransition<T>): Promise<T>;
  /** Forgets the key, e.g. after a successful login. */
  clear(key: string): Promise<void>;
  /**
   * Forgets up to `limit` keys whose last attempt came before `before` and that are not blocked past it:
   * every address that ever tried would otherwise keep its row for good. Says how many went.
   */
  prune(before: string, limit: number): Promise<number>;
}

/**
 * Transitions are compare-and-set: the state read is written over only where it still stands, and a
 * step that lost a race runs again on the state that won, on every database alike and across
 * instances, with no lock held between the statements. Within one process a key's transitions also
 * queue behind each other, so a burst at one key costs no retries.
 */
export function throttleStore({ db, run, write, tables }: Dialect): ThrottleStore {
  const { loginThrottle } = tables;
  const byKey = db
    .select()
    .from(loginThrottle)
    .where(eq(loginThrottle.key, sql.placeholder("key")))
    .prepare("throttle_by_key");
  const read = async (key: string): Promise<ThrottleRecord | null> => first(await byKey.execute({ key }));
  const unchanged = (state: ThrottleRecord) =>
    and(
      eq(loginThrottle.key, state.key),
      eq(loginThrottle.failures, state.failures),
      eq(loginThrottle.lastFailureAt, state.lastFailureAt),
      state.blockedUntil === null
        ? isNull(loginThrottle.blockedUntil)
        : eq(loginThrottle.blockedUntil, state.blockedUntil),
    );

  /** Writes `next` where `current` still stands; false when another write came first. */
  async function compareAndSet(current: ThrottleRecord | null, next: ThrottleRecord | null): Promise<boolean> {
    if (next === current) return true;
    const written = { key: loginThrottle.key };
    if (current === null) {
      return (
        next === null ||
        (await db.insert(loginThrottle).values(next).onConflictDoNothing().returning(written)).length > 0
      );
    }
    if (next === null) return (await db.delete(loginThrottle).where(unchanged(current)).returning(written)).length > 0;
    const { key: _, ...state } = next;
    return (await db.update(loginThrottle).set(state).where(unchanged(current)).returning(written)).length > 0;
  }

  const queued = keyedQueue();
  return {
    get: (key) => run(() => read(key)),
    transition: (key, step) =>
      queued(key, () =>
        write(async () => {
          for (;;) {
            const current = await read(key);
            const { next, result } = step(current);
            if (await compareAndSet(current, next)) return result;
          }
        }),
      ),
    clear: (key) =>
      queued(key, () =>
        write(async () => {
          await db.delete(loginThrottle).where(eq(loginThrottle.key, key));
        }),
      ),
    prune: (before, limit) =>
      write(() => {
        const idle = and(
          lt(loginThrottle.lastFailureAt, before),
          or(isNull(loginThrottle.blockedUntil), lt(loginThrottle.blockedUntil, before)),
        );
        // A key written since it was picked stays (pruneWhere checks the condition again).
        return pruneWhere(db, loginThrottle, loginThrottle.key, idle, limit);
      }),
  };
}

/** Runs the work for one key after the work queued before it for that key; keys are forgotten once idle. */
function keyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const result = (tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}
