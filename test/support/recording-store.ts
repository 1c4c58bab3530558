// A store that writes down every method called on the parts named, as "users.findByLogin": what tests of "the
// same work whatever the input" (no account enumeration) compare.
import type { VersionedStore } from "../../src/db/store.ts";

type Part = "users" | "categories" | "throttle" | "revocations" | "mailedResets";

export function recordingStore(calls: string[], parts: readonly Part[]) {
  return (store: VersionedStore): VersionedStore => {
    const wrap = <T extends object>(name: string, part: T): T =>
      Object.fromEntries(
        Object.entries(part).map(([method, fn]) => [
          method,
          (...args: unknown[]) => (
            calls.push(`${name}.${method}`), (fn as (...a: unknown[]) => unknown).apply(part, args)
          ),
        ]),
      ) as T;
    return { ...store, ...Object.fromEntries(parts.map((name) => [name, wrap(name, store[name])])) };
  };
}
