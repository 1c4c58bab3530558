// The storage contract, as tests. Every database svc supports runs this suite through a thin runner
// that only opens a fresh, migrated store and cleans it up afterwards.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  LoadRefused,
  ReferenceGone,
  StaleVersion,
  type AuditEvent,
  type CategoryRecord,
  type SessionRecord,
  type NewCategory,
  type NewUser,
  type Store,
  type VersionedStore,
  type ThrottleRecord,
  type UserRecord,
} from "../../src/db/store.ts";
import { auditEvent, type AuditAction } from "../../src/audit/model.ts";
import { caching } from "../../src/cache/caching.ts";
import { AppError } from "../../src/errors.ts";

export interface StoreHarness {
  /** A fresh, migrated, empty store. */
  open(): Promise<VersionedStore>;
  /** Called after each test with the store it used. */
  dispose(store: VersionedStore): Promise<void>;
}

let clock = Date.parse("2026-01-01T00:00:00.000Z");
const tick = () => new Date((clock += 1000)).toISOString();

/** A user to create, named `username`, with an e-mail made from the name. */
export function newUser(username: string, overrides: Partial<NewUser> = {}): NewUser {
  return {
    id: Bun.randomUUIDv7(),
    username,
    email: `${username.toLowerCase()}@example.com`,
    passwordHash: `hash-of-${username}`,
    createdAt: tick(),
    ...overrides,
  };
}

function newCategory(name: string, overrides: Partial<NewCategory> = {}): NewCategory {
  return {
    id: Bun.randomUUIDv7(),
    name,
    description: null,
    colorHex: "#64748B",
    icon: null,
    createdBy: null,
    createdAt: tick(),
    ...overrides,
  };
}

/** An audit event of the action, happening at the clock's next tick. */
function event(action: AuditAction, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return { ...auditEvent(action, { origin: { address: "192.0.2.9", requestId: "req-1" } }, tick()), ...overrides };
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code as AppError["code"]);
}

/**
 * Runs the contract on the store the harness opens, and the plain contract once more through the cache
 * layer, which must keep it: every result as the database's, every write seen at once.
 */
export function storeConformance(name: string, harness: StoreHarness): void {
  describe(`store conformance: ${name}`, () => {
    contract(harness);
    versionedContract(harness);
  });
  let raw: VersionedStore | undefined;
  describe(`store conformance: ${name}, through the cache layer`, () => {
    contract({
      async open() {
        raw = await harness.open();
        return caching(raw).store;
      },
      dispose: () => harness.dispose(raw!),
    });
  });
}

/** What every store, cached or not, must do. */
function contract<S extends Store>(harness: { open(): Promise<S>; dispose(store: S): Promise<void> }): void {
  let store: S;
  beforeEach(async () => {
    store = await harness.open();
  });
  afterEach(async () => {
    await harness.dispose(store);
  });

  describe("users", () => {
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

  describe("categories", () => {
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

  describe("category changes (the feed realtime subscribers are fed from)", () => {
    /** Categories written only to mark a point in the feed; what a listener heard leaves them out. */
    const sentinels = new Set<string>();

    /** Listens, and collects what is delivered. */
    async function listening() {
      const delivered: Array<{ kind: string; id: string; name?: string; version?: number }> = [];
      const waiting: Array<() => boolean> = [];
      let resyncs = 0;
      const stop = await store.changes.listen(
        (change) => {
          delivered.push({
            kind: change.kind,
            id: change.id,
            name: change.category?.name,
            version: change.category?.version,
          });
          for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i]!()) waiting.splice(i, 1);
        },
        () => resyncs++,
      );
      const heard = () => delivered.filter((change) => !sentinels.has(change.id));
      /**
       * Every change delivered so far. PostgreSQL delivers asynchronously but in commit order, so once a
       * sentinel written after every other write has come, nothing that was going to come is on its way.
       */
      const settle = async () => {
        const sentinel = await store.categories.create(newCategory(`sentinel ${Bun.randomUUIDv7()}`));
        sentinels.add(sentinel.id);
        await new Promise<void>((resolve) => {
          const done = () => delivered.some((change) => change.id === sentinel.id) && (resolve(), true);
          if (!done()) waiting.push(done);
        });
        return heard();
      };
      return { heard, settle, stop, resyncs: () => resyncs };
    }

    test("create, update and delete are delivered once each, in order, with the category as committed", async () => {
      const feed = await listening();
      const books = await store.categories.create(newCategory("Books"));
      await store.categories.update(books.id, { name: "Novels" }, tick());
      await store.categories.delete(books.id, event("category.deleted", { targetId: books.id }));
      expect(await feed.settle()).toEqual([
        { kind: "CREATED", id: books.id, name: "Books", version: 1 },
        { kind: "UPDATED", id: books.id, name: "Novels", version: 2 },
        { kind: "DELETED", id: books.id, name: undefined, version: undefined },
      ]);
      expect(feed.resyncs()).toBe(0);
      await feed.stop();
    });

    test("a write that fails or changes nothing delivers nothing: a clash, a stale version, a missing id", async () => {
      const books = await store.categories.create(newCategory("Books"));
      await store.categories.create(newCategory("Films"));
      const feed = await listening();
      await expectCode(store.categories.update(books.id, { name: "FILMS" }, tick()), "category_name_taken");
      await expectCode(store.categories.create(newCategory("books")), "category_name_taken");
      await store.categories.update(books.id, { icon: "x" }, tick(), 7).catch(() => {});
      await store.categories.delete(books.id, undefined, 7).catch(() => {});
      expect(await store.categories.update(Bun.randomUUIDv7(), { icon: "x" }, tick())).toBeNull();
      expect(await store.categories.delete(Bun.randomUUIDv7())).toBe(false);
      expect(await feed.settle()).toEqual([]);
      await feed.stop();
    });

    test("a bulk load (svc copy) announces nothing; the next write does", async () => {
      const feed = await listening();
      const loaded = { ...newCategory("Loaded"), updatedAt: tick(), version: 1 };
      await store.load(
        { users: (async function* () {})(), categories: [loaded] },
        { replace: true, expect: { users: 0, categories: 1 } },
      );
      await store.categories.update(loaded.id, { icon: "box" }, tick());
      expect((await feed.settle()).map((c) => [c.kind, c.version])).toEqual([["UPDATED", 2]]);
      await feed.stop();
    });

    test("every listener hears every change; one that stopped hears no more", async () => {
      const [one, two] = [await listening(), await listening()];
      const books = await store.categories.create(newCategory("Books"));
      expect((await one.settle()).map((c) => c.id)).toEqual([books.id]);
      expect((await two.settle()).map((c) => c.id)).toEqual([books.id]);
      await one.stop();
      await store.categories.update(books.id, { icon: "book" }, tick());
      expect((await two.settle()).map((c) => c.kind)).toEqual(["CREATED", "UPDATED"]);
      expect(one.heard().map((c) => c.kind)).toEqual(["CREATED"]);
      await two.stop();
    });
  });

  describe("login throttle", () => {
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
  });

  describe("revocations", () => {
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

  describe("counts and load", () => {
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

  describe("roles, status and administration", () => {
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
      const session = {
        id: Bun.randomUUIDv7(),
        userId: ann.id,
        createdAt: tick(),
        lastUsedAt: tick(),
        expiresAt: new Date(clock + 86_400_000).toISOString(),
        userAgent: null,
        clientAddress: null,
      };
      await store.sessions.start(session, { digest: "d1", expiresAt: session.expiresAt }, { tokenVersion: 0 });
      const off = await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect(off).toMatchObject({ status: "disabled", tokenVersion: 1 });
      expect(await store.sessions.list(ann.id, new Date(clock).toISOString())).toEqual([]);
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
      const session = {
        id: Bun.randomUUIDv7(),
        userId: ann.id,
        createdAt: at,
        lastUsedAt: at,
        expiresAt: new Date(clock + 86_400_000).toISOString(),
        userAgent: null,
        clientAddress: null,
      };
      await store.sessions.start(session, { digest: "d", expiresAt: session.expiresAt }, { tokenVersion: 0 }, login);
      expect((await store.users.findById(ann.id))!.lastLoginAt).toBe(at);
      expect(await store.audit.list({ limit: 10 })).toEqual([login]);
    });
  });

  describe("password resets", () => {
    const day = 86_400_000;
    async function issued(
      user: UserRecord,
      digest = `code-${Bun.randomUUIDv7()}`,
      expiresAt = new Date(clock + day).toISOString(),
    ) {
      expect(
        await store.resets.issue(
          { digest, userId: user.id, createdAt: tick(), expiresAt, issuedBy: null },
          event("password_reset.issued"),
        ),
      ).toBe(true);
      return digest;
    }
    const redemption = (user: UserRecord) => {
      const at = tick();
      return {
        passwordHash: `new-hash-${Bun.randomUUIDv7()}`,
        at,
        session: {
          id: Bun.randomUUIDv7(),
          userId: user.id,
          createdAt: at,
          lastUsedAt: at,
          expiresAt: new Date(clock + day).toISOString(),
          userAgent: null,
          clientAddress: null,
        },
        refresh: { digest: `refresh-${Bun.randomUUIDv7()}`, expiresAt: new Date(clock + day).toISOString() },
      };
    };

    test("redeeming sets the password, bumps the token version, ends every session and starts one", async () => {
      const ann = await store.users.create(newUser("ann"));
      const old = redemption(ann);
      await store.sessions.start(old.session, old.refresh, { tokenVersion: 0 });
      const code = await issued(ann);
      const r = redemption(ann);
      const redeemed = event("password_reset.redeemed");
      const user = await store.resets.redeem(code, ann.id, r, redeemed);
      expect(user).toMatchObject({ passwordHash: r.passwordHash, tokenVersion: 1, lastLoginAt: r.at, updatedAt: r.at });
      const live = await store.sessions.list(ann.id, new Date(clock).toISOString());
      expect(live.map((s) => s.id)).toEqual([r.session.id]);
      expect(await store.sessions.findRefresh(old.refresh.digest)).toBeNull();
      expect((await store.audit.list({ limit: 10 }))[0]).toEqual(redeemed);
      // Spent: a second time it is invalid, and changes nothing.
      expect(await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      expect((await store.users.findById(ann.id))!.tokenVersion).toBe(1);
    });

    test("of concurrent redemptions of one code exactly one lands", async () => {
      const ann = await store.users.create(newUser("ann"));
      const code = await issued(ann);
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed")),
        ),
      );
      expect(results.filter((r) => typeof r === "object")).toHaveLength(1);
      expect(results.filter((r) => r === "invalid")).toHaveLength(5);
      expect((await store.users.findById(ann.id))!.tokenVersion).toBe(1);
      expect(await store.sessions.list(ann.id, new Date(clock).toISOString())).toHaveLength(1);
    });

    test("a code is invalid for another user, once expired, or once replaced by a newer one", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const code = await issued(ann);
      expect(await store.resets.redeem(code, bob.id, redemption(bob), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      expect(await store.resets.redeem(code, "not-an-id", redemption(bob), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      const newer = await issued(ann);
      expect(await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      const expired = await issued(bob, "short", new Date(clock + 500).toISOString());
      expect(await store.resets.redeem(expired, bob.id, redemption(bob), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      expect(typeof (await store.resets.redeem(newer, ann.id, redemption(ann), event("password_reset.redeemed")))).toBe(
        "object",
      );
    });

    test("a disabled account's code is refused and stays; issuing for a user who is gone is false", async () => {
      const ann = await store.users.create(newUser("ann"));
      const code = await issued(ann);
      await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect(await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed"))).toBe(
        "disabled",
      );
      await store.users.administer(ann.id, { status: "active" }, tick(), event("admin.user.updated"));
      expect(typeof (await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed")))).toBe(
        "object",
      );
      const ghost = await store.users.create(newUser("ghost"));
      await store.users.delete(ghost.id);
      expect(
        await store.resets.issue(
          {
            digest: "ghost-code",
            userId: ghost.id,
            createdAt: tick(),
            expiresAt: new Date(clock + day).toISOString(),
            issuedBy: null,
          },
          event("password_reset.issued"),
        ),
      ).toBe(false);
      expect((await store.audit.list({ action: "password_reset.issued", limit: 10 })).length).toBe(1);
    });

    test("prune forgets expired codes only", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      await issued(ann, "old", new Date(clock + 1000).toISOString());
      const live = await issued(bob);
      clock += 5000;
      expect(await store.resets.prune(new Date(clock).toISOString(), 10)).toBe(1);
      expect(await store.resets.prune(new Date(clock).toISOString(), 10)).toBe(0);
      expect(typeof (await store.resets.redeem(live, bob.id, redemption(bob), event("password_reset.redeemed")))).toBe(
        "object",
      );
    });
  });

  describe("audit log", () => {
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

  describe("idempotency keys", () => {
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

  describe("sessions", () => {
    const day = 86_400_000;
    /** A session of the user, started at the clock's next tick, with its first refresh token. */
    async function started(user: UserRecord, overrides: Partial<SessionRecord> = {}) {
      const at = tick();
      const session: SessionRecord = {
        id: Bun.randomUUIDv7(),
        userId: user.id,
        createdAt: at,
        lastUsedAt: at,
        expiresAt: new Date(Date.parse(at) + 30 * day).toISOString(),
        userAgent: "test/1.0",
        clientAddress: "192.0.2.1",
        ...overrides,
      };
      const refresh = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: session.expiresAt };
      expect(await store.sessions.start(session, refresh, { tokenVersion: user.tokenVersion })).toEqual(session);
      return { session, refresh };
    }
    const rotation = (at: string, sealed = "sealed") => ({
      at,
      successor: {
        digest: `digest-${Bun.randomUUIDv7()}`,
        expiresAt: new Date(Date.parse(at) + 30 * day).toISOString(),
      },
      sealed,
    });

    test("start stores the session and its refresh token; findRefresh finds both with the user, by digest", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session, refresh } = await started(ann);
      expect(await store.sessions.findRefresh(refresh.digest)).toEqual({
        token: { ...refresh, sessionId: session.id, rotatedAt: null, successor: null },
        session,
        user: ann,
      });
      expect(await store.sessions.findRefresh("digest-unknown")).toBeNull();
    });

    test("many starts, rotations and plain writes at once all land, none inside another's transaction", async () => {
      const ann = await store.users.create(newUser("ann"));
      const first = await started(ann);
      const work = Array.from({ length: 20 }, (_, i) => [
        started(ann),
        store.users.create(newUser(`user${i}`)),
        store.categories.create(newCategory(`Category ${i}`)),
      ]).flat();
      const rotations = Array.from({ length: 5 }, () => store.sessions.rotate(first.refresh.digest, rotation(tick())));
      await Promise.all(work);
      expect((await Promise.all(rotations)).filter(Boolean)).toHaveLength(1);
      expect(await store.counts()).toEqual({ users: 21, categories: 20 });
      expect(await store.sessions.list(ann.id, new Date(clock).toISOString())).toHaveLength(21);
    });

    test("rotations racing the session's end, the user's deletion or a password change: each lands or finds it gone, never an error", async () => {
      for (let round = 0; round < 30; round++) {
        const user = await store.users.create(newUser(`racer${round}`));
        const { session, refresh } = await started(user);
        const renewed = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: session.expiresAt };
        const rivals = [
          () => store.sessions.end(user.id, { only: session.id }),
          () => store.users.delete(user.id),
          () => store.users.setPassword(user.id, "h2", tick(), 0, { sessionId: session.id, refresh: renewed }),
        ];
        const at = tick();
        const outcomes = await Promise.allSettled([
          store.sessions.rotate(refresh.digest, rotation(at)),
          rivals[round % rivals.length]!(),
          store.sessions.rotate(refresh.digest, rotation(at)),
        ]);
        expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
      }
    });

    test("start is null and stores nothing for a user who is gone, disabled, or past the token version", async () => {
      const ghost = { ...(await store.users.create(newUser("ghost"))) };
      await store.users.delete(ghost.id);
      const session = (user: UserRecord): SessionRecord => ({
        id: Bun.randomUUIDv7(),
        userId: user.id,
        createdAt: tick(),
        lastUsedAt: tick(),
        expiresAt: new Date(clock + 30 * day).toISOString(),
        userAgent: null,
        clientAddress: null,
      });
      const refresh = () => ({
        digest: `digest-${Bun.randomUUIDv7()}`,
        expiresAt: new Date(clock + day).toISOString(),
      });
      expect(await store.sessions.start(session(ghost), refresh(), { tokenVersion: 0 })).toBeNull();
      const ann = await store.users.create(newUser("ann"));
      expect(await store.sessions.start(session(ann), refresh(), { tokenVersion: 1 })).toBeNull();
      await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect(await store.sessions.start(session(ann), refresh(), { tokenVersion: 1 })).toBeNull();
      expect(await store.sessions.page(10)).toEqual({ sessions: [], refreshTokens: [] });
    });

    test("rotate lands once, however many race, on the current token only; the session moves on", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session, refresh } = await started(ann);
      const at = tick();
      const attempts = Array.from({ length: 8 }, (_, i) => rotation(at, `sealed-${i}`));
      const landed = await Promise.all(attempts.map((r) => store.sessions.rotate(refresh.digest, r)));
      expect(landed.filter(Boolean)).toHaveLength(1);
      const winner = attempts[landed.indexOf(true)]!;
      const spent = await store.sessions.findRefresh(refresh.digest);
      expect(spent?.token).toMatchObject({ rotatedAt: at, successor: winner.sealed });
      expect(spent?.session).toEqual({ ...session, lastUsedAt: at, expiresAt: winner.successor.expiresAt });
      expect((await store.sessions.findRefresh(winner.successor.digest))?.token).toEqual({
        ...winner.successor,
        sessionId: session.id,
        rotatedAt: null,
        successor: null,
      });
      for (const loser of attempts.filter((r) => r !== winner)) {
        expect(await store.sessions.findRefresh(loser.successor.digest)).toBeNull();
      }
      expect(await store.sessions.rotate(refresh.digest, rotation(tick()))).toBe(false);
      expect(await store.sessions.rotate("digest-unknown", rotation(tick()))).toBe(false);
    });

    test("list gives the user's unexpired sessions, newest first", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const first = (await started(ann)).session;
      const second = (await started(ann)).session;
      const expired = (await started(ann, { expiresAt: new Date(clock - 1000).toISOString() })).session;
      await started(bob);
      const now = new Date(clock).toISOString();
      expect(await store.sessions.list(ann.id, now)).toEqual([second, first]);
      expect(await store.sessions.list(Bun.randomUUIDv7(), now)).toEqual([]);
      expect(await store.sessions.list("not-an-id", now)).toEqual([]);
      expect(expired.id).toBeDefined();
    });

    test("end ends the sessions in scope, with their refresh tokens, and only the user's own", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const a1 = await started(ann);
      const a2 = await started(ann);
      const a3 = await started(ann);
      const b1 = await started(bob);
      const now = new Date(clock).toISOString();
      expect(await store.sessions.end(bob.id, { only: a1.session.id })).toBe(0);
      expect(await store.sessions.end(ann.id, { only: "not-an-id" })).toBe(0);
      expect(await store.sessions.end(ann.id, { only: a1.session.id })).toBe(1);
      expect(await store.sessions.findRefresh(a1.refresh.digest)).toBeNull();
      expect(await store.sessions.end(ann.id, { except: a3.session.id })).toBe(1);
      expect((await store.sessions.list(ann.id, now)).map((x) => x.id)).toEqual([a3.session.id]);
      expect(await store.sessions.findRefresh(a2.refresh.digest)).toBeNull();
      expect(await store.sessions.end(ann.id, "all")).toBe(1);
      expect(await store.sessions.list(ann.id, now)).toEqual([]);
      expect(await store.sessions.list(bob.id, now)).toEqual([b1.session]);
    });

    test("deleting the user ends their sessions", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { refresh } = await started(ann);
      await store.users.delete(ann.id);
      expect(await store.sessions.findRefresh(refresh.digest)).toBeNull();
      expect(await store.sessions.page(10)).toEqual({ sessions: [], refreshTokens: [] });
    });

    test("a session's access tokens are revoked once it ends: tokenHolder reads the session", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session } = await started(ann);
      const other = await started(ann);
      expect((await store.tokenHolder(ann.id, "jti", session.id))?.revoked).toBe(false);
      await store.sessions.end(ann.id, { only: session.id });
      expect((await store.tokenHolder(ann.id, "jti", session.id))?.revoked).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", other.session.id))?.revoked).toBe(false);
      // Another user's session, an unknown one, or no id at all: revoked.
      const bob = await store.users.create(newUser("bob"));
      expect((await store.tokenHolder(bob.id, "jti", other.session.id))?.revoked).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", Bun.randomUUIDv7()))?.revoked).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", "not-an-id"))?.revoked).toBe(true);
      // A token with a session is not looked up by its jti, nor one without by a session.
      await store.revocations.revoke("jti", new Date(clock + day).toISOString());
      expect((await store.tokenHolder(ann.id, "jti", other.session.id))?.revoked).toBe(false);
      expect((await store.tokenHolder(ann.id, "jti"))?.revoked).toBe(true);
    });

    test("tokenHolder carries the session's expires_at, as the last rotation set it; none without a live session", async () => {
      const ann = await store.users.create(newUser("ann"));
      const { session, refresh } = await started(ann);
      const holder = await store.tokenHolder(ann.id, "jti", session.id);
      expect(holder).toEqual({ user: ann, revoked: false, expiresAt: session.expiresAt });
      const turn = rotation(tick());
      expect(await store.sessions.rotate(refresh.digest, turn)).toBe(true);
      expect((await store.tokenHolder(ann.id, "jti", session.id))?.expiresAt).toBe(turn.successor.expiresAt);
      // A token from before sessions has no session to end it; an ended session has no expiry left.
      expect((await store.tokenHolder(ann.id, "jti"))?.expiresAt).toBeNull();
      await store.sessions.end(ann.id, { only: session.id });
      expect(await store.tokenHolder(ann.id, "jti", session.id)).toEqual({ user: ann, revoked: true, expiresAt: null });
    });

    test("setPassword with keep ends every other session and renews the kept one's refresh tokens, in one change", async () => {
      const ann = await store.users.create(newUser("ann"));
      const kept = await started(ann);
      const other = await started(ann);
      const renewed = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: new Date(clock + 7 * day).toISOString() };
      const at = tick();
      const changed = await store.users.setPassword(ann.id, "h2", at, 0, {
        sessionId: kept.session.id,
        refresh: renewed,
      });
      expect(changed?.tokenVersion).toBe(1);
      const now = new Date(clock).toISOString();
      expect(await store.sessions.list(ann.id, now)).toEqual([
        { ...kept.session, lastUsedAt: at, expiresAt: renewed.expiresAt },
      ]);
      expect(await store.sessions.findRefresh(kept.refresh.digest)).toBeNull();
      expect(await store.sessions.findRefresh(other.refresh.digest)).toBeNull();
      expect((await store.sessions.findRefresh(renewed.digest))?.session.id).toBe(kept.session.id);

      // A stale version changes nothing, sessions included; a kept session that is gone, likewise.
      const again = { digest: `digest-${Bun.randomUUIDv7()}`, expiresAt: renewed.expiresAt };
      expect(
        await store.users.setPassword(ann.id, "h3", tick(), 0, { sessionId: kept.session.id, refresh: again }),
      ).toBeNull();
      expect(
        await store.users.setPassword(ann.id, "h3", tick(), 1, { sessionId: other.session.id, refresh: again }),
      ).toBeNull();
      expect((await store.users.findById(ann.id))?.passwordHash).toBe("h2");
      expect(await store.sessions.findRefresh(again.digest)).toBeNull();
      expect((await store.sessions.findRefresh(renewed.digest))?.session.id).toBe(kept.session.id);

      // Without keep, every session ends.
      expect((await store.users.setPassword(ann.id, "h4", tick(), 1))?.tokenVersion).toBe(2);
      expect(await store.sessions.list(ann.id, now)).toEqual([]);
    });

    test("prune deletes expired sessions and expired refresh tokens, at most `limit` rows at a time", async () => {
      const ann = await store.users.create(newUser("ann"));
      const past = new Date(clock - 1000).toISOString();
      const live = await started(ann);
      for (let i = 0; i < 3; i++) await started(ann, { expiresAt: past });
      // A spent refresh token of the live session, expired.
      const spent = rotation(tick());
      await store.sessions.rotate(live.refresh.digest, spent);
      await store.sessions.start(
        { ...live.session, id: Bun.randomUUIDv7() },
        { digest: "digest-short-lived", expiresAt: past },
        { tokenVersion: 0 },
      );
      const now = new Date(clock).toISOString();
      expect(await store.sessions.prune(now, 2)).toBe(2);
      expect(await store.sessions.prune(now, 10)).toBe(2);
      expect(await store.sessions.prune(now, 10)).toBe(0);
      expect(await store.sessions.findRefresh("digest-short-lived")).toBeNull();
      expect(await store.sessions.findRefresh(spent.successor.digest)).not.toBeNull();
      expect((await store.sessions.list(ann.id, now)).length).toBe(2);
    });

    test("page gives sessions in id order with their refresh tokens; load puts them back exactly", async () => {
      const ann = await store.users.create(newUser("ann"));
      const a = await started(ann);
      const b = await started(ann);
      await store.sessions.rotate(a.refresh.digest, rotation(tick()));
      const first = await store.sessions.page(1);
      expect(first.sessions).toEqual([{ ...a.session, lastUsedAt: expect.any(String), expiresAt: expect.any(String) }]);
      expect(first.refreshTokens).toHaveLength(2);
      const second = await store.sessions.page(1, a.session.id);
      expect(second.sessions).toEqual([b.session]);
      expect(await store.sessions.page(1, b.session.id)).toEqual({ sessions: [], refreshTokens: [] });

      const users = [await store.users.findById(ann.id)];
      async function* all() {
        yield first;
        yield second;
      }
      await store.load(
        {
          users: (async function* () {
            yield users as UserRecord[];
          })(),
          categories: [],
          sessions: all(),
        },
        {
          replace: true,
          expect: { users: 1, categories: 0 },
        },
      );
      expect(await store.sessions.page(10)).toEqual({
        sessions: [...first.sessions, ...second.sessions],
        refreshTokens: expect.arrayContaining([...first.refreshTokens, ...second.refreshTokens]),
      });
    });
  });

  test("storage is ok while writes find room", async () => {
    await store.users.create(newUser("ann"));
    expect(store.storage()).toBe("ok");
  });

  // Its refusal, when the database does not answer, is test/outage.test.ts's (a proxy cut between them).
  test("ping resolves while the database answers", async () => {
    await expect(store.ping(1000)).resolves.toBeUndefined();
  });
}

/** What the cache layer needs of a database besides the contract: table versions and the token check. */
function versionedContract(harness: StoreHarness): void {
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
      const session = {
        id: Bun.randomUUIDv7(),
        userId: ann.id,
        createdAt: at,
        lastUsedAt: at,
        expiresAt: new Date(clock + 86_400_000).toISOString(),
        userAgent: null,
        clientAddress: null,
      };
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
