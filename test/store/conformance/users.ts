// The users contract: create, find, list, update, setPassword and delete, as every store must keep them.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store } from "../../../src/db/store.ts";
import { newUser, newCategory, expectCode, tick } from "./fixtures.ts";

export function usersContract(use: () => Store): void {
  describe("users", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    test("create returns the stored user with token version 0 and updatedAt = createdAt", async () => {
      const input = newUser("Ann");
      const user = await store.users.create(input);
      expect(user).toEqual({
        ...input,
        tokenVersion: 0,
        updatedAt: input.createdAt,
        role: "user",
        status: "active",
        lastLoginAt: null,
        emailVerifiedAt: null,
      });
      expect(await store.users.findById(input.id)).toEqual(user);
    });

    test("findById is null for an unknown id", async () => {
      expect(await store.users.findById(Bun.randomUUIDv7())).toBeNull();
    });

    test("findByLogin matches the username without regard to case, or the e-mail", async () => {
      const user = await store.users.create(newUser("Ann"));
      expect((await store.users.findByLogin("ann"))?.id).toBe(user.id);
      expect((await store.users.findByLogin("ANN"))?.id).toBe(user.id);
      expect((await store.users.findByLogin("ANN@example.com"))?.id).toBe(user.id);
      expect(await store.users.findByLogin("bob")).toBeNull();
      expect(await store.users.findByLogin("bob@example.com")).toBeNull();
    });

    test("create refuses a username taken without regard to case, and a taken e-mail", async () => {
      await store.users.create(newUser("Ann"));
      await expectCode(store.users.create(newUser("aNN", { email: "other@example.com" })), "username_taken");
      await expectCode(store.users.create(newUser("bob", { email: "ann@example.com" })), "email_taken");
      expect((await store.users.list({ limit: 10 })).length).toBe(1);
    });

    test("list pages in id order with a keyset", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store.users.create(newUser(`user${i}`))).id);
      expect((await store.users.list({ limit: 10 })).map((u) => u.id)).toEqual(ids);
      expect((await store.users.list({ limit: 2 })).map((u) => u.id)).toEqual(ids.slice(0, 2));
      expect((await store.users.list({ limit: 2, after: ids[1] })).map((u) => u.id)).toEqual(ids.slice(2, 4));
      expect(await store.users.list({ limit: 2, after: ids[4] })).toEqual([]);
    });

    test("update applies the patch, keeps the rest, and refuses clashes", async () => {
      const ann = await store.users.create(newUser("ann"));
      await store.users.create(newUser("bob"));
      const at = tick();
      const renamed = await store.users.update(ann.id, { username: "Anna" }, at);
      expect(renamed).toEqual({ ...ann, username: "Anna", updatedAt: at });
      expect((await store.users.findByLogin("anna"))?.id).toBe(ann.id);
      expect(await store.users.findByLogin("ann")).toBeNull();
      await expectCode(store.users.update(ann.id, { username: "BOB" }, tick()), "username_taken");
      await expectCode(store.users.update(ann.id, { email: "bob@example.com" }, tick()), "email_taken");
      expect(await store.users.findById(ann.id)).toEqual(renamed);
      expect(await store.users.update(Bun.randomUUIDv7(), { username: "ghost" }, tick())).toBeNull();
    });

    test("setPassword replaces the hash and bumps the token version", async () => {
      const ann = await store.users.create(newUser("ann"));
      const at = tick();
      const changed = await store.users.setPassword(ann.id, "new-hash", at, 0);
      expect(changed).toEqual({ ...ann, passwordHash: "new-hash", tokenVersion: 1, updatedAt: at });
      expect((await store.users.setPassword(ann.id, "newer-hash", tick(), 1))?.tokenVersion).toBe(2);
      expect(await store.users.setPassword(Bun.randomUUIDv7(), "x", tick(), 0)).toBeNull();
    });

    test("setPassword changes nothing once the token version has moved on, however the calls race", async () => {
      const ann = await store.users.create(newUser("ann"));
      const results = await Promise.all(
        ["a", "b", "c", "d"].map((h) => store.users.setPassword(ann.id, `hash-${h}`, tick(), 0)),
      );
      const landed = results.filter((r) => r !== null);
      expect(landed).toHaveLength(1);
      expect(await store.users.findById(ann.id)).toEqual(landed[0]!);
      expect(await store.users.setPassword(ann.id, "stale", tick(), 0)).toBeNull();
      expect((await store.users.findById(ann.id))?.passwordHash).toBe(landed[0]!.passwordHash);
    });

    test("update and delete with a token version land only while the version is still that one", async () => {
      const ann = await store.users.create(newUser("ann"));
      expect((await store.users.update(ann.id, { username: "anna" }, tick(), 0))?.username).toBe("anna");
      await store.users.setPassword(ann.id, "new-hash", tick(), 0);
      expect(await store.users.update(ann.id, { email: "thief@example.com" }, tick(), 0)).toBeNull();
      expect(await store.users.delete(ann.id, 0)).toBe(false);
      expect((await store.users.findById(ann.id))?.email).toBe("ann@example.com");
      expect(await store.users.delete(ann.id, 1)).toBe(true);
    });

    test("delete removes the user and leaves their categories with no creator", async () => {
      const ann = await store.users.create(newUser("ann"));
      const category = await store.categories.create(newCategory("Books", { createdBy: ann.id }));
      expect(await store.users.delete(ann.id)).toBe(true);
      expect(await store.users.findById(ann.id)).toBeNull();
      expect(await store.categories.findById(category.id)).toEqual({ ...category, createdBy: null });
      expect(await store.users.delete(ann.id)).toBe(false);
    });
  });
}
