// What the cache layer needs of a database besides the contract: table versions that move with every
// write to their table, and the token check read in one statement with them.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { VersionedStore } from "../../../src/db/store.ts";
import type { StoreHarness } from "../conformance.ts";
import { event, newCategory, newSession, newUser, tick } from "./fixtures.ts";

/** What the cache layer needs of a database besides the contract: table versions and the token check. */
export function versionedContract(harness: StoreHarness): void {
  let store: VersionedStore;
  beforeEach(async () => {
    store = await harness.open();
  });
  afterEach(async () => {
    await harness.dispose(store);
  });

  describe("table versions", () => {
    test("change with every write to their table, and only then", async () => {
      const v0 = await store.versions();
      expect(await store.versions()).toEqual(v0);
      const ann = await store.users.create(newUser("ann"));
      const v1 = await store.versions();
      expect(v1.users).toBeGreaterThan(v0.users);
      expect(v1.categories).toBe(v0.categories);
      await store.users.findById(ann.id);
      await store.users.list({ limit: 10 });
      expect(await store.versions()).toEqual(v1);
      const books = await store.categories.create(newCategory("Books", { createdBy: ann.id }));
      const v2 = await store.versions();
      expect(v2.categories).toBeGreaterThan(v1.categories);
      await store.categories.update(books.id, { icon: "book" }, tick());
      const v3 = await store.versions();
      expect(v3.categories).toBeGreaterThan(v2.categories);
      await store.users.setPassword(ann.id, "h2", tick(), 0);
      const v4 = await store.versions();
      expect(v4.users).toBeGreaterThan(v3.users);
      // Deleting the creator clears categories' created_by: both tables changed.
      await store.users.delete(ann.id);
      const v5 = await store.versions();
      expect(v5.users).toBeGreaterThan(v4.users);
      expect(v5.categories).toBeGreaterThan(v4.categories);
    });
  });

  describe("table versions and administration", () => {
    test("role and status changes bump the users version; a login's lastLoginAt does not", async () => {
      const ann = await store.users.create(newUser("ann"));
      const v0 = await store.versions();
      const at = tick();
      const session = newSession(ann.id, at);
      await store.sessions.start(
        session,
        { digest: "d", expiresAt: session.expiresAt },
        { tokenVersion: 0 },
        event("login.succeeded"),
      );
      expect(await store.versions()).toEqual(v0);
      await store.users.administer(ann.id, { role: "admin" }, tick(), event("admin.user.updated"));
      const v1 = await store.versions();
      expect(v1.users).toBeGreaterThan(v0.users);
      await store.users.create(newUser("root", { role: "admin" }));
      const v2 = await store.versions();
      await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect((await store.versions()).users).toBeGreaterThan(v2.users);
    });
  });

  describe("tokenState and tokenHolder", () => {
    test("tokenState is the token's revocation and the table versions, or null for an unknown user", async () => {
      const ann = await store.users.create(newUser("ann"));
      const before = await store.versions();
      expect(await store.tokenState(ann.id, "any-jti")).toEqual({ revoked: false, expiresAt: null, versions: before });
      await store.categories.create(newCategory("Books", { createdBy: ann.id }));
      const after = (await store.tokenState(ann.id, "any-jti"))!.versions;
      expect(after).toEqual(await store.versions());
      expect(after).toEqual({ users: before.users, categories: after.categories });
      expect(after.categories).not.toBe(before.categories);
      expect(await store.tokenState(Bun.randomUUIDv7(), "any-jti")).toBeNull();
      expect(await store.tokenState("not-an-id", "any-jti")).toBeNull();
    });

    test("tokenHolder is the stored user with the token's revocation, or null for an unknown user", async () => {
      const ann = await store.users.create(newUser("ann"));
      expect(await store.tokenHolder(ann.id, "any-jti")).toEqual({ user: ann, revoked: false, expiresAt: null });
      expect(await store.tokenHolder(Bun.randomUUIDv7(), "any-jti")).toBeNull();
      expect(await store.tokenHolder("not-an-id", "any-jti")).toBeNull();
    });

    test("tokenHolder reports the user as they are now: after an update, a password change and a deletion", async () => {
      const ann = await store.users.create(newUser("ann"));
      expect((await store.tokenHolder(ann.id, "any-jti"))!.user).toEqual(ann);
      const renamed = (await store.users.update(ann.id, { username: "anna" }, new Date().toISOString()))!;
      expect((await store.tokenHolder(ann.id, "any-jti"))!.user).toEqual(renamed);
      const rekeyed = (await store.users.setPassword(
        ann.id,
        "another hash",
        new Date().toISOString(),
        ann.tokenVersion,
      ))!;
      expect(rekeyed.tokenVersion).toBe(renamed.tokenVersion + 1);
      expect((await store.tokenHolder(ann.id, "any-jti"))!.user).toEqual(rekeyed);
      await store.users.delete(ann.id);
      expect(await store.tokenHolder(ann.id, "any-jti")).toBeNull();
    });
  });
}
