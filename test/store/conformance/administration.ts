// Roles, status and administration: the last active admin stays, whatever races.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store, type UserRecord } from "../../../src/db/store.ts";
import { newSession, newUser, event, expectCode, tick, clock } from "./fixtures.ts";

export function administrationContract(use: () => Store): void {
  describe("roles, status and administration", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    const admin = (name: string) => store.users.create(newUser(name, { role: "admin" }));

    test("a new user is an active user who never logged in; create may make an admin", async () => {
      const ann = await store.users.create(newUser("ann"));
      expect([ann.role, ann.status, ann.lastLoginAt]).toEqual(["user", "active", null]);
      const root = await admin("root");
      expect(root.role).toBe("admin");
      expect(await store.users.activeAdmins()).toBe(1);
    });

    test("create records its audit event in the same change, and a clash records nothing", async () => {
      const created = event("user.created");
      const ann = await store.users.create(newUser("ann"), created);
      await expectCode(
        store.users.create(newUser("ANN", { email: "other@example.com" }), event("user.created")),
        "username_taken",
      );
      const events = await store.audit.list({ limit: 10 });
      expect(events).toEqual([{ ...created, targetId: ann.id }]);
    });

    test("administer changes role and status and records the event; an equal change writes nothing", async () => {
      await admin("root");
      const ann = await store.users.create(newUser("ann"));
      const at = tick();
      const promoted = await store.users.administer(ann.id, { role: "admin" }, at, event("admin.user.updated"));
      expect(promoted).toMatchObject({ role: "admin", status: "active", updatedAt: at, tokenVersion: 0 });
      expect(await store.users.administer(ann.id, { role: "admin" }, tick(), event("admin.user.updated"))).toEqual(
        promoted!,
      );
      expect(await store.audit.list({ limit: 10 })).toHaveLength(1);
      expect(
        await store.users.administer(Bun.randomUUIDv7(), { role: "admin" }, tick(), event("admin.user.updated")),
      ).toBeNull();
      expect(
        await store.users.administer("not-an-id", { role: "admin" }, tick(), event("admin.user.updated")),
      ).toBeNull();
    });

    test("disabling bumps the token version and ends every session; enabling revokes nothing", async () => {
      const ann = await store.users.create(newUser("ann"));
      const session = newSession(ann.id, tick(), { lastUsedAt: tick() });
      await store.sessions.start(session, { digest: "d1", expiresAt: session.expiresAt }, { tokenVersion: 0 });
      const off = await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect(off).toMatchObject({ status: "disabled", tokenVersion: 1 });
      expect(await store.sessions.list(ann.id, new Date(clock.ms).toISOString())).toEqual([]);
      expect(await store.sessions.findRefresh("d1")).toBeNull();
      const on = await store.users.administer(ann.id, { status: "active" }, tick(), event("admin.user.updated"));
      expect(on).toMatchObject({ status: "active", tokenVersion: 1 });
    });

    test("the last active admin cannot be demoted, disabled or deleted; nothing changes", async () => {
      const root = await admin("root");
      for (const change of [{ role: "user" as const }, { status: "disabled" as const }]) {
        await expectCode(store.users.administer(root.id, change, tick(), event("admin.user.updated")), "last_admin");
      }
      await expectCode(store.users.delete(root.id, undefined, event("admin.user.deleted")), "last_admin");
      await expectCode(store.users.delete(root.id, 0), "last_admin");
      expect(await store.users.findById(root.id)).toEqual(root);
      expect(await store.audit.list({ limit: 10 })).toEqual([]);
      // A disabled admin does not count: the active one is still the last.
      const other = await admin("other");
      await store.users.administer(other.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      await expectCode(
        store.users.administer(root.id, { role: "user" }, tick(), event("admin.user.updated")),
        "last_admin",
      );
      // Without any admin, users come and go as ever.
      const ann = await store.users.create(newUser("ann"));
      expect(await store.users.delete(ann.id)).toBe(true);
    });

    test("two admins demoting each other at once: exactly one lands, one admin remains", async () => {
      const a = await admin("a");
      const b = await admin("b");
      const results = await Promise.allSettled([
        store.users.administer(a.id, { role: "user" }, tick(), event("admin.user.updated")),
        store.users.delete(b.id, undefined, event("admin.user.deleted")),
      ]);
      expect(results.filter((r) => r.status === "fulfilled" && r.value)).toHaveLength(1);
      for (const r of results.filter((r) => r.status === "rejected")) {
        expect((r as PromiseRejectedResult).reason.code).toBe("last_admin");
      }
      expect(await store.users.activeAdmins()).toBe(1);
    });

    test("search: a prefix of username or e-mail without regard to case, role and status, paged by id", async () => {
      const made: UserRecord[] = [];
      for (const name of ["alice", "Alfred", "bob", "al_x", "al%y"]) made.push(await store.users.create(newUser(name)));
      await store.users.create(newUser("zed", { email: "alpha@example.com" }));
      const names = async (filter: Parameters<typeof store.users.search>[0]) =>
        (await store.users.search(filter)).map((u) => u.username);
      expect(await names({ search: "AL", limit: 10 })).toEqual(["alice", "Alfred", "al_x", "al%y", "zed"]);
      expect(await names({ search: "al_", limit: 10 })).toEqual(["al_x"]);
      expect(await names({ search: "al%", limit: 10 })).toEqual(["al%y"]);
      expect(await names({ search: "bob@", limit: 10 })).toEqual(["bob"]);
      expect(await names({ search: "al", limit: 2 })).toEqual(["alice", "Alfred"]);
      expect(await names({ search: "al", limit: 2, after: made[1]!.id })).toEqual(["al_x", "al%y"]);
      await store.users.administer(made[2]!.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      await store.users.administer(made[0]!.id, { role: "admin" }, tick(), event("admin.user.updated"));
      expect(await names({ status: "disabled", limit: 10 })).toEqual(["bob"]);
      expect(await names({ role: "admin", limit: 10 })).toEqual(["alice"]);
      expect(await names({ role: "admin", status: "disabled", limit: 10 })).toEqual([]);
      expect(await names({ limit: 100 })).toHaveLength(6);
    });

    test("a login stamps lastLoginAt and records the event with the session", async () => {
      const ann = await store.users.create(newUser("ann"));
      const at = tick();
      const login = event("login.succeeded", { actorId: ann.id, targetId: ann.id });
      const session = newSession(ann.id, at);
      await store.sessions.start(session, { digest: "d", expiresAt: session.expiresAt }, { tokenVersion: 0 }, login);
      expect((await store.users.findById(ann.id))!.lastLoginAt).toBe(at);
      expect(await store.audit.list({ limit: 10 })).toEqual([login]);
    });
  });
}
