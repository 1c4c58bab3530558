// The change feed and the event log realtime subscribers are fed from: each committed category change,
// once, in order.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store } from "../../../src/db/store.ts";
import { newCategory, event, expectCode, tick } from "./fixtures.ts";

export function categoryChangesContract(use: () => Store): void {
  describe("category changes (the feed realtime subscribers are fed from)", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    /** Categories written only to mark a point in the feed; what a listener heard leaves them out. */
    const sentinels = new Set<string>();

    /** Listens, and collects what is delivered. */
    async function listening() {
      const delivered: Array<{ kind: string; id: string; name?: string; version?: number }> = [];
      const waiting: Array<() => boolean> = [];
      let resyncs = 0;
      // Where the log stands now: what a listener hears is what is logged after it, read on each notice.
      let last = (await store.categoryEvents.bounds()).last ?? 0;
      let reading = Promise.resolve();
      const read = () => {
        reading = reading.then(async () => {
          for (const { seq, change } of await store.categoryEvents.after(last, 1000)) {
            last = seq;
            delivered.push({
              kind: change.kind,
              id: change.id,
              name: change.category?.name,
              version: change.category?.version,
            });
          }
          for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i]!()) waiting.splice(i, 1);
        });
      };
      const stop = await store.changes.listen(read, () => resyncs++);
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

    test("the log numbers changes in commit order and reads them back after any number", async () => {
      const start = (await store.categoryEvents.bounds()).last ?? 0;
      const books = await store.categories.create(newCategory("Books"));
      await store.categories.update(books.id, { name: "Novels" }, tick());
      await store.categories.delete(books.id, event("category.deleted", { targetId: books.id }));
      const logged = await store.categoryEvents.after(start, 10);
      expect(logged.map(({ change }) => [change.kind, change.category?.name ?? null])).toEqual([
        ["CREATED", "Books"],
        ["UPDATED", "Novels"],
        ["DELETED", null],
      ]);
      const numbers = logged.map(({ seq }) => seq);
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(new Set(numbers).size).toBe(3);
      expect(logged[0]!.change.category).toEqual(books);
      expect(await store.categoryEvents.after(numbers[0]!, 1)).toEqual([logged[1]!]);
      expect((await store.categoryEvents.bounds()).last).toBe(numbers[2]!);
    });

    test("pruning keeps the newest changes and never the last one away; a bulk load starts a new epoch of the source's identity", async () => {
      for (const name of ["A", "B", "C", "D"]) await store.categories.create(newCategory(name));
      const { last } = await store.categoryEvents.bounds();
      const identity = await store.categoryEvents.identity();
      const epoch = await store.categoryEvents.epoch();
      expect(identity).toMatch(/^[0-9a-f]{16}$/);
      expect(epoch).toMatch(/^[0-9a-f]{16}$/);
      expect(epoch).not.toBe(identity);
      // Keep 2: everything older goes, in batches of `limit`.
      let gone = 0;
      for (let n = -1; n !== 0; gone += n) n = await store.categoryEvents.prune(2, "1970-01-01T00:00:00.000Z", 1);
      expect(gone).toBeGreaterThan(0);
      expect(await store.categoryEvents.bounds()).toEqual({ first: last! - 1, last });
      // Past its age, all but the newest go.
      expect(await store.categoryEvents.prune(1_000, "9999-01-01T00:00:00.000Z", 100)).toBe(1);
      expect(await store.categoryEvents.bounds()).toEqual({ first: last, last });
      await store.load(
        { users: (async function* () {})(), categories: [] },
        { replace: true, expect: { users: 0, categories: 0 } },
      );
      expect(await store.categoryEvents.identity()).not.toBe(identity);
      expect(await store.categoryEvents.epoch()).not.toBe(epoch);
      expect(await store.categoryEvents.bounds()).toEqual({ first: null, last: null });
      // A copy (svc copy) is the same database moved: it takes the source's identity, and starts a new epoch.
      const before = await store.categoryEvents.epoch();
      await store.load(
        { users: (async function* () {})(), categories: [], identity: "00000000000000c0" },
        { replace: true, expect: { users: 0, categories: 0 } },
      );
      expect(await store.categoryEvents.identity()).toBe("00000000000000c0");
      expect(await store.categoryEvents.epoch()).not.toBe(before);
    });
  });
}
