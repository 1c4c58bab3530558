// Idempotency keys: of concurrent claims exactly one wins, a caller holds at most `limit`, leases lapse.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store } from "../../../src/db/store.ts";

export function idempotencyContract(use: () => Store): void {
  describe("idempotency keys", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    const claim = (caller: string, key: string, at = Date.now(), fingerprint = "print") => ({
      caller,
      key,
      fingerprint,
      createdAt: new Date(at).toISOString(),
      expiresAt: new Date(at + 86_400_000).toISOString(),
      lockedUntil: new Date(at + 60_000).toISOString(),
    });
    /** A bound no test here reaches, but for those about it. */
    const LIMIT = 1000;

    test("of concurrent claims of one key exactly one wins; the others see the claim, then the answer", async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => store.idempotency.claim(claim("user:a", "k"), LIMIT)),
      );
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
      for (const r of results.filter((r) => !r.claimed))
        expect(r).toMatchObject({ claimed: false, held: { fingerprint: "print", status: null, answer: null } });
      await store.idempotency.complete("user:a", "k", 201, "sealed");
      expect(await store.idempotency.claim(claim("user:a", "k"), LIMIT)).toMatchObject({
        claimed: false,
        held: { status: 201, answer: "sealed" },
      });
      // Another caller's same key is another record.
      expect(await store.idempotency.claim(claim("user:b", "k"), LIMIT)).toEqual({ claimed: true });
    });

    test("a claim whose request never finished lapses after its lease; an expired record gives way; release frees the key", async () => {
      const at = Date.now();
      await store.idempotency.claim(claim("user:a", "stale", at), LIMIT);
      expect((await store.idempotency.claim(claim("user:a", "stale", at + 1000), LIMIT)).claimed).toBe(false);
      expect((await store.idempotency.claim(claim("user:a", "stale", at + 61_000), LIMIT)).claimed).toBe(true);
      await store.idempotency.claim(claim("user:a", "old", at), LIMIT);
      await store.idempotency.complete("user:a", "old", 200, "x");
      expect((await store.idempotency.claim(claim("user:a", "old", at + 86_401_000), LIMIT)).claimed).toBe(true);
      await store.idempotency.claim(claim("user:a", "freed", at), LIMIT);
      await store.idempotency.release("user:a", "freed");
      expect((await store.idempotency.claim(claim("user:a", "freed", at), LIMIT)).claimed).toBe(true);
      // A completed record is not released by mistake.
      await store.idempotency.complete("user:a", "freed", 200, "y");
      await store.idempotency.release("user:a", "freed");
      expect(await store.idempotency.find("user:a", "freed", new Date(at).toISOString())).toMatchObject({
        status: 200,
      });
    });

    test("prune forgets expired records only, even where a live one shares the key", async () => {
      const at = Date.now();
      await store.idempotency.claim(
        { ...claim("user:a", "same", at), expiresAt: new Date(at - 1000).toISOString() },
        LIMIT,
      );
      await store.idempotency.claim(claim("user:b", "same", at), LIMIT);
      expect(await store.idempotency.prune(new Date(at).toISOString(), 10)).toBe(1);
      expect(await store.idempotency.find("user:b", "same", new Date(at).toISOString())).not.toBeNull();
      expect(await store.idempotency.find("user:a", "same", new Date(at).toISOString())).toBeNull();
    });
    test("a caller holds at most `limit` live keys: past it no claim, and when one frees; its held keys and other callers aside", async () => {
      const at = Date.now();
      const first = claim("client:a", "k1", at);
      const full = { claimed: false as const, held: null, freeAt: first.expiresAt };
      expect(await store.idempotency.claim(first, 2)).toEqual({ claimed: true });
      await store.idempotency.complete("client:a", "k1", 201, "x");
      // A claim still running counts too.
      expect(await store.idempotency.claim(claim("client:a", "k2", at + 1000), 2)).toEqual({ claimed: true });
      expect(await store.idempotency.claim(claim("client:a", "k3", at + 2000), 2)).toEqual(full);
      expect(await store.idempotency.claim(claim("client:a", "k1", at + 2000), 2)).toMatchObject({
        claimed: false,
        held: { status: 201, answer: "x" },
      });
      expect(await store.idempotency.claim(claim("client:b", "k3", at + 2000), 2)).toEqual({ claimed: true });
      // A released claim frees its place at once, a lapsed one after its lease, an expired record after its expiry.
      await store.idempotency.release("client:a", "k2");
      expect(await store.idempotency.claim(claim("client:a", "k3", at + 3000), 2)).toEqual({ claimed: true });
      expect(await store.idempotency.claim(claim("client:a", "k4", at + 3000), 2)).toEqual(full);
      expect(await store.idempotency.claim(claim("client:a", "k4", at + 63_001), 2)).toEqual({ claimed: true });
      await store.idempotency.complete("client:a", "k4", 200, "y");
      expect(await store.idempotency.claim(claim("client:a", "k5", at + 63_001), 2)).toEqual(full);
      expect(await store.idempotency.claim(claim("client:a", "k5", at + 86_400_001), 2)).toEqual({ claimed: true });
    });

    test("of concurrent claims by one caller past its limit, exactly `limit` win", async () => {
      const at = Date.now();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.idempotency.claim(claim("client:c", `k${i}`, at), 5)),
      );
      expect(results.filter((r) => r.claimed)).toHaveLength(5);
      for (const r of results.filter((r) => !r.claimed)) expect(r).toMatchObject({ claimed: false, held: null });
    });
  });
}
