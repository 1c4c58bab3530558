// The audit log: read newest first under filters, recorded with the changes it describes, pruned, paged.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store } from "../../../src/db/store.ts";
import { newUser, newCategory, event, tick } from "./fixtures.ts";

export function auditContract(use: () => Store): void {
  describe("audit log", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    test("lists newest first, filtered by action, actor, target, either, since, and paged by id", async () => {
      const ann = Bun.randomUUIDv7();
      const bob = Bun.randomUUIDv7();
      const e1 = event("login.failed", { targetId: ann, outcome: "failure", detail: '{"reason":"wrong_password"}' });
      const e2 = event("login.succeeded", { actorId: ann, targetId: ann });
      const e3 = event("admin.user.updated", { actorId: bob, targetId: ann, detail: '{"role":"admin"}' });
      const e4 = event("session.revoked", { actorId: bob, targetId: bob });
      for (const e of [e1, e2, e3, e4]) await store.audit.record(e);
      const ids = async (filter: Partial<Parameters<typeof store.audit.list>[0]>) =>
        (await store.audit.list({ limit: 100, ...filter })).map((e) => e.id);
      expect(await store.audit.list({ limit: 100 })).toEqual([e4, e3, e2, e1]);
      expect(await ids({ action: "login.succeeded" })).toEqual([e2.id]);
      expect(await ids({ actorId: bob })).toEqual([e4.id, e3.id]);
      expect(await ids({ targetId: ann })).toEqual([e3.id, e2.id, e1.id]);
      expect(await ids({ userId: bob })).toEqual([e4.id, e3.id]);
      expect(await ids({ since: e3.at })).toEqual([e4.id, e3.id]);
      expect(await ids({ limit: 2 })).toEqual([e4.id, e3.id]);
      expect(await ids({ limit: 2, before: e3.id })).toEqual([e2.id, e1.id]);
      expect(await ids({ actorId: "nobody" })).toEqual([]);
    });

    test("changes record their events with them: category deletion, ended sessions (only when some ended)", async () => {
      const ann = await store.users.create(newUser("ann"));
      const books = await store.categories.create(newCategory("Books", { createdBy: ann.id }));
      const deleted = event("category.deleted", { targetId: books.id });
      expect(await store.categories.delete(books.id, deleted)).toBe(true);
      expect(await store.categories.delete(books.id, event("category.deleted"))).toBe(false);
      expect(await store.sessions.end(ann.id, "all", event("session.revoked"))).toBe(0);
      expect(await store.audit.list({ limit: 10 })).toEqual([deleted]);
    });

    test("prune forgets events older than the cut-off, at most `limit` at a time", async () => {
      const old = [event("login.failed"), event("login.failed"), event("login.failed")];
      for (const e of old) await store.audit.record(e);
      const cut = tick();
      const kept = event("login.succeeded");
      await store.audit.record(kept);
      expect(await store.audit.prune(cut, 2)).toBe(2);
      expect(await store.audit.prune(cut, 2)).toBe(1);
      expect(await store.audit.prune(cut, 2)).toBe(0);
      expect(await store.audit.list({ limit: 10 })).toEqual([kept]);
    });

    test("page reads the whole log in id order, for copying", async () => {
      const events = [event("login.failed"), event("login.succeeded"), event("user.created")];
      for (const e of events) await store.audit.record(e);
      expect(await store.audit.page(2)).toEqual(events.slice(0, 2));
      expect(await store.audit.page(2, events[1]!.id)).toEqual(events.slice(2));
    });
  });
}
