// The categories contract: names unique without regard to case, the list's order and pages, versions.
import { beforeEach, describe, expect, test } from "bun:test";
import { ReferenceGone, StaleVersion, type Store } from "../../../src/db/store.ts";
import { newCategory, event, expectCode, tick } from "./fixtures.ts";

export function categoriesContract(use: () => Store): void {
  describe("categories", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    test("create returns the stored category; findById finds it", async () => {
      const input = newCategory("Books", { description: "Paper", colorHex: "#AABBCC", icon: "book" });
      const category = await store.categories.create(input);
      expect(category).toEqual({ ...input, updatedAt: input.createdAt, version: 1 });
      expect(await store.categories.findById(input.id)).toEqual(category);
      expect(await store.categories.findById(Bun.randomUUIDv7())).toBeNull();
    });

    test("create by a creator who is gone throws ReferenceGone and stores nothing", async () => {
      const error = await store.categories
        .create(newCategory("Orphan", { createdBy: Bun.randomUUIDv7() }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReferenceGone);
      expect(await store.categories.list()).toEqual([]);
    });

    test("names are unique without regard to case, Unicode included", async () => {
      await store.categories.create(newCategory("Café"));
      await expectCode(store.categories.create(newCategory("CAFÉ")), "category_name_taken");
      await expectCode(store.categories.create(newCategory("café")), "category_name_taken");
      expect((await store.categories.list()).length).toBe(1);
    });

    test("list orders by name without regard to case", async () => {
      for (const name of ["banana", "Apple", "cherry", "apricot"]) await store.categories.create(newCategory(name));
      expect((await store.categories.list()).map((c) => c.name)).toEqual(["Apple", "apricot", "banana", "cherry"]);
    });

    test("list pages in the same order: at most `first`, after the given category", async () => {
      for (const name of ["banana", "Apple", "cherry", "apricot"]) await store.categories.create(newCategory(name));
      const all = await store.categories.list();
      expect(await store.categories.list({ first: 2 })).toEqual(all.slice(0, 2));
      expect(await store.categories.list({ first: 2, after: all[1]! })).toEqual(all.slice(2));
      expect(await store.categories.list({ after: all[0]! })).toEqual(all.slice(1));
      expect(await store.categories.list({ first: 5, after: all[3]! })).toEqual([]);
      expect(await store.categories.list({ first: null })).toEqual(all);
    });

    test("update applies the patch, clears with null, and refuses a taken name", async () => {
      const books = await store.categories.create(newCategory("Books", { description: "Paper", icon: "book" }));
      await store.categories.create(newCategory("Films"));
      const at = tick();
      const updated = await store.categories.update(books.id, { name: "Novels", description: null }, at);
      expect(updated).toEqual({ ...books, name: "Novels", description: null, updatedAt: at, version: 2 });
      await expectCode(store.categories.update(books.id, { name: "FILMS" }, tick()), "category_name_taken");
      expect(await store.categories.findById(books.id)).toEqual(updated);
      expect(await store.categories.update(Bun.randomUUIDv7(), { name: "x" }, tick())).toBeNull();
    });

    test("each update adds 1 to the version; with ifVersion, a stale version throws StaleVersion and writes nothing", async () => {
      const books = await store.categories.create(newCategory("Books"));
      const v2 = await store.categories.update(books.id, { icon: "book" }, tick(), 1);
      expect(v2!.version).toBe(2);
      expect((await store.categories.update(books.id, { icon: "shelf" }, tick()))!.version).toBe(3);
      const stale = await store.categories.update(books.id, { name: "Lost" }, tick(), 2).catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(StaleVersion);
      expect((stale as StaleVersion).current).toBe(3);
      expect((await store.categories.findById(books.id))!).toMatchObject({ name: "Books", icon: "shelf", version: 3 });
      // A missing category is null, with or without a version.
      expect(await store.categories.update(Bun.randomUUIDv7(), { name: "x" }, tick(), 1)).toBeNull();
    });

    test("delete with ifVersion: a stale version throws StaleVersion and deletes nothing, nor records its audit event", async () => {
      const books = await store.categories.create(newCategory("Books"));
      await store.categories.update(books.id, { icon: "book" }, tick());
      const gone = event("category.deleted", { targetId: books.id });
      const stale = await store.categories.delete(books.id, gone, 1).catch((e: unknown) => e);
      expect((stale as StaleVersion).current).toBe(2);
      expect(await store.categories.findById(books.id)).not.toBeNull();
      expect((await store.audit.list({ limit: 10 })).filter((e) => e.action === "category.deleted")).toEqual([]);
      expect(await store.categories.delete(books.id, undefined, 2)).toBe(true);
      expect(await store.categories.delete(books.id, undefined, 2)).toBe(false);
    });

    test("two conditional updates of one version at once: one succeeds, the other is stale", async () => {
      const books = await store.categories.create(newCategory("Books"));
      const outcomes = await Promise.all(
        ["a", "b", "c", "d"].map((icon) =>
          store.categories.update(books.id, { icon }, tick(), 1).then(
            (c) => c!.version,
            (e: unknown) => (e instanceof StaleVersion ? "stale" : e),
          ),
        ),
      );
      expect(outcomes.sort()).toEqual([2, "stale", "stale", "stale"]);
    });

    test("delete removes it once", async () => {
      const books = await store.categories.create(newCategory("Books"));
      expect(await store.categories.delete(books.id)).toBe(true);
      expect(await store.categories.delete(books.id)).toBe(false);
      expect(await store.categories.list()).toEqual([]);
    });
  });
}
