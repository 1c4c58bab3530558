// Failed-login state in this process's memory, for when the database cannot record it: while its
// storage is full, logins go on with their attempts still counted, atomically, before the password is
// checked (for this instance alone, until the database takes writes again).
import { setBounded } from "../lib/bounded-map.ts";
import type { ThrottleRecord, ThrottleStore } from "../db/store.ts";
import { AppError } from "../errors/index.ts";

/** Keys kept at most; the oldest go first. */
const KEYS_KEPT = 10_000;

export function memoryThrottleStore(): ThrottleStore {
  const states = new Map<string, ThrottleRecord>();
  return {
    async get(key) {
      return states.get(key) ?? null;
    },
    // Synchronous from read to write: nothing else in the process runs in between.
    async transition(key, step) {
      const current = states.get(key) ?? null;
      const { next, result } = step(current);
      if (next === null) states.delete(key);
      else setBounded(states, key, next, KEYS_KEPT);
      return result;
    },
    async clear(key) {
      states.delete(key);
    },
    // Bounded already (KEYS_KEPT): nothing grows here without limit.
    async prune() {
      return 0;
    },
  };
}

/** The database's throttle state, or this process's memory for as long as the database's storage is full. */
export function throttleWhenFull(
  database: ThrottleStore,
  memory: ThrottleStore = memoryThrottleStore(),
): ThrottleStore {
  const either =
    <A extends unknown[], R>(method: (store: ThrottleStore, ...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await method(database, ...args);
      } catch (error) {
        if (!(error instanceof AppError && error.code === "storage_full")) throw error;
        return method(memory, ...args);
      }
    };
  return {
    get: either((store, key: string) => store.get(key)),
    transition: either((store, key: string, step: Parameters<ThrottleStore["transition"]>[1]) =>
      store.transition(key, step),
    ) as ThrottleStore["transition"],
    clear: either((store, key: string) => store.clear(key)),
    // Only the database's rows outlive the process.
    prune: (before, limit) => database.prune(before, limit),
  };
}
