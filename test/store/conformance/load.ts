// Counts and the bulk load of `svc copy`: records exactly as given, refused or rolled back unless the counts match.
import { beforeEach, describe, expect, test } from "bun:test";
import { LoadRefused, type CategoryRecord, type Store, type UserRecord } from "../../../src/db/store.ts";
import { newUser, newCategory, tick } from "./fixtures.ts";

export function loadContract(use: () => Store): void {
  describe("counts and load", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    async function* batches(users: UserRecord[], size: number) {
      for (let i = 0; i < users.length; i += size) yield users.slice(i, i + size);
    }

    function records() {
      const users: UserRecord[] = Array.from({ length: 7 }, (_, i) => ({
        ...newUser(`loaded${i}`),
        tokenVersion: i,
        updatedAt: tick(),
        role: i === 0 ? "admin" : "user",
        status: i === 1 ? "disabled" : "active",
        lastLoginAt: i === 2 ? tick() : null,
        emailVerifiedAt: i === 3 ? tick() : null,
      }));
      const categories: CategoryRecord[] = [
        { ...newCategory("Owned", { createdBy: users[0]!.id }), updatedAt: tick(), version: 7 },
        { ...newCategory("Orphan"), updatedAt: tick(), version: 1 },
      ];
      return { users, categories };
    }

    test("loads records exactly as given, in batches, reporting progress", async () => {
      const { users, categories } = records();
      const progress: number[] = [];
      const counts = await store.load(
        { users: batches(users, 3), categories },
        { replace: false, expect: { users: 7, categories: 2 }, onProgress: (c) => progress.push(c.users) },
      );
      expect(counts).toEqual({ users: 7, categories: 2 });
      expect(await store.counts()).toEqual({ users: 7, categories: 2 });
      expect(await store.users.list({ limit: 100 })).toEqual(users);
      expect(await store.categories.findById(categories[0]!.id)).toEqual(categories[0]!);
      expect((await store.users.findByLogin("LOADED3"))?.tokenVersion).toBe(3);
      expect(progress).toContain(7);
    });

    test("refuses a non-empty target without replace, and changes nothing", async () => {
      await store.users.create(newUser("already"));
      const { users, categories } = records();
      const error = await store
        .load({ users: batches(users, 3), categories }, { replace: false, expect: { users: 7, categories: 2 } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LoadRefused);
      expect(await store.counts()).toEqual({ users: 1, categories: 0 });
    });

    test("replaces everything with replace, and rolls back when the counts come out wrong", async () => {
      await store.users.create(newUser("already"));
      const { users, categories } = records();
      const wrong = await store
        .load({ users: batches(users, 3), categories }, { replace: true, expect: { users: 8, categories: 2 } })
        .catch((e: unknown) => e);
      expect(wrong).toBeInstanceOf(LoadRefused);
      expect(await store.counts()).toEqual({ users: 1, categories: 0 });
      expect(
        await store.load(
          { users: batches(users, 3), categories },
          { replace: true, expect: { users: 7, categories: 2 } },
        ),
      ).toEqual({ users: 7, categories: 2 });
      expect(await store.users.findByLogin("already")).toBeNull();
    });
  });
}
