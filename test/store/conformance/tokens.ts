// Revoked token ids: remembered until their expiry, as tokenHolder reports them.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store } from "../../../src/db/store.ts";
import { newUser } from "./fixtures.ts";

export function revocationsContract(use: () => Store): void {
  describe("revocations", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    test("remember a revoked token id until its expiry, then forget it, as tokenHolder reports", async () => {
      const ann = await store.users.create(newUser("ann"));
      const isRevoked = async (jti: string) => (await store.tokenHolder(ann.id, jti))!.revoked;
      const soon = new Date(Date.now() + 60_000).toISOString();
      expect(await isRevoked("jti-1")).toBe(false);
      await store.revocations.revoke("jti-1", soon);
      await store.revocations.revoke("jti-1", soon); // twice is harmless
      expect(await isRevoked("jti-1")).toBe(true);
      await store.revocations.revoke("jti-old", new Date(Date.now() - 1000).toISOString());
      await store.revocations.revoke("jti-2", soon);
      expect(await isRevoked("jti-old")).toBe(false);
      expect(await isRevoked("jti-1")).toBe(true);
    });
  });
}
