// The login throttle's contract: each key's transitions one at a time, however many race.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store, type ThrottleRecord } from "../../../src/db/store.ts";

export function throttleContract(use: () => Store): void {
  describe("login throttle", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    const increment =
      (key: string, blockedUntil: string | null = null) =>
      (current: ThrottleRecord | null) => ({
        next: {
          key,
          failures: (current?.failures ?? 0) + 1,
          lastFailureAt: "2026-01-01T00:00:00.000Z",
          blockedUntil,
        },
        result: current?.failures ?? 0,
      });

    test("transition reads and writes a key as one step, however many run at once", async () => {
      expect(await store.throttle.get("account:ann")).toBeNull();
      const seen = await Promise.all(
        Array.from({ length: 20 }, () => store.throttle.transition("account:ann", increment("account:ann"))),
      );
      // Each step saw the state the one before it wrote: no two read the same count, none was lost.
      expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(await store.throttle.get("account:ann")).toEqual({
        key: "account:ann",
        failures: 20,
        lastFailureAt: "2026-01-01T00:00:00.000Z",
        blockedUntil: null,
      });
      expect(await store.throttle.get("account:bob")).toBeNull();
    });

    test("transition keeps a block, leaves the state alone when handed it back, and forgets on null; clear forgets", async () => {
      await store.throttle.transition("account:ann", increment("account:ann", "2026-01-01T00:05:00.000Z"));
      const state = await store.throttle.get("account:ann");
      expect(state?.blockedUntil).toBe("2026-01-01T00:05:00.000Z");
      expect(
        await store.throttle.transition("account:ann", (current) => ({ next: current, result: current?.failures })),
      ).toBe(1);
      expect(await store.throttle.get("account:ann")).toEqual(state);
      await store.throttle.transition("account:ann", () => ({ next: null, result: undefined }));
      expect(await store.throttle.get("account:ann")).toBeNull();
      await store.throttle.transition("account:bob", () => ({ next: null, result: undefined }));
      expect(await store.throttle.get("account:bob")).toBeNull();
      await store.throttle.transition("account:cyd", increment("account:cyd"));
      await store.throttle.clear("account:cyd");
      expect(await store.throttle.get("account:cyd")).toBeNull();
    });

    test("prune forgets keys idle since before the cutoff, never one still blocked, in batches", async () => {
      const at = (key: string, lastFailureAt: string, blockedUntil: string | null) =>
        store.throttle.transition(key, () => ({ next: { key, failures: 3, lastFailureAt, blockedUntil }, result: 0 }));
      await at("signup:old-1", "2026-01-01T00:00:00.000Z", null);
      await at("signup:old-2", "2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00.000Z");
      await at("signup:old-3", "2026-01-01T00:00:00.000Z", null);
      await at("account:blocked", "2026-01-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z");
      await at("account:recent", "2026-02-01T00:00:00.000Z", null);
      const cutoff = "2026-01-15T00:00:00.000Z";
      expect(await store.throttle.prune(cutoff, 2)).toBe(2);
      expect(await store.throttle.prune(cutoff, 2)).toBe(1);
      expect(await store.throttle.prune(cutoff, 2)).toBe(0);
      for (const key of ["signup:old-1", "signup:old-2", "signup:old-3"])
        expect(await store.throttle.get(key)).toBeNull();
      expect((await store.throttle.get("account:blocked"))?.failures).toBe(3);
      expect((await store.throttle.get("account:recent"))?.failures).toBe(3);
    });
  });
}
