// client.categories.live(): a list kept equal to svc's through every change, in process; and the list's own
// rules on a source the test drives: what an event changed while a read was on its way wins, RESYNC reads
// again, a stale read is dropped, a refusal stops it.
import { expect, test } from "bun:test";
import { type Category, type CategoryEvent, createClient, type SvcError } from "../../client/src/index.ts";
import { type LiveChange, liveList, type LiveSource } from "../../client/src/live-list.ts";
import type { SubscribeOptions } from "../../client/src/subscription.ts";
import { testApp } from "../helpers.ts";
import { failure } from "../support/failure.ts";

const PASSWORD = "correct horse battery";

test("categories.live() reads the list, then follows creations, updates and deletions to equal svc's", async () => {
  const { app } = await testApp();
  const fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.handle(new Request(input, init))) as typeof globalThis.fetch;
  const client = createClient({ baseUrl: "http://localhost", fetch });
  await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  await client.auth.login({ username: "ann", password: PASSWORD });
  const books = await client.categories.create({ name: "Books" });
  await client.categories.create({ name: "films" });

  const changes: LiveChange[] = [];
  let woken: (() => void) | null = null;
  const live = client.categories.live({
    onChange: (_, change) => {
      changes.push(change);
      woken?.();
    },
  });
  const changed = (count: number) =>
    new Promise<void>((resolve) => {
      woken = () => changes.length >= count && resolve();
      woken();
    });
  await live.ready;
  expect(live.state).toEqual({ status: "open", fresh: true });
  expect(live.items.map((category) => category.name)).toEqual(["Books", "films"]);

  const atlas = await client.categories.create({ name: "Atlas" });
  await client.categories.update(books.id, { name: "Zines" });
  await client.categories.delete(atlas.id);
  await changed(4);
  expect(changes.map((change) => change.kind)).toEqual(["READ", "CREATED", "UPDATED", "DELETED"]);
  expect(live.items).toEqual(await client.categories.list());
  expect(live.items.map((category) => category.name)).toEqual(["films", "Zines"]);
  live.stop();
  expect(live.state).toEqual({ status: "closed", error: null });
});

/** A source whose reads and events the test hands out by hand. */
function handDriven() {
  const reads: Array<(categories: Category[]) => void> = [];
  let options: SubscribeOptions = {};
  let listener: (event: CategoryEvent) => void = () => {};
  let unsubscribed = false;
  const source: LiveSource = {
    read: () => new Promise((resolve) => reads.push(resolve)),
    subscribe(heard, how) {
      listener = heard;
      options = how;
      return () => (unsubscribed = true);
    },
  };
  return {
    source,
    reads,
    open: (fresh = true) => options.onOpen?.({ fresh }),
    send: (event: Omit<CategoryEvent, "cursor">) => listener({ cursor: "0000000000000001.x", ...event }),
    refuse: (error: SvcError) => options.onError?.(error),
    unsubscribed: () => unsubscribed,
  };
}

const category = (id: string, name: string, version = 1): Category => ({
  id,
  name,
  description: null,
  colorHex: "#64748B",
  icon: null,
  createdBy: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  version,
});

test("what events changed while the read was on its way wins over the read", async () => {
  const drive = handDriven();
  const live = liveList(drive.source);
  drive.open();
  expect(drive.reads).toHaveLength(1);
  drive.send({ kind: "UPDATED", id: "a", category: category("a", "Apples", 3) });
  drive.send({ kind: "DELETED", id: "b", category: null });
  drive.send({ kind: "CREATED", id: "c", category: category("c", "Cherries") });
  // The read left before those changes: a at version 2, b still there, no c.
  drive.reads[0]!([category("a", "Apples", 2), category("b", "Bananas"), category("d", "Dates")]);
  await live.ready;
  expect(live.items.map((item) => [item.id, item.version])).toEqual([
    ["a", 3],
    ["c", 1],
    ["d", 1],
  ]);
});

test("RESYNC reads again and the new read replaces the list; a read overtaken by a later one is dropped", async () => {
  const drive = handDriven();
  const seen: string[][] = [];
  let changed: () => void = () => {};
  const live = liveList(drive.source, {
    onChange: (items) => {
      seen.push(items.map((item) => item.id));
      changed();
    },
  });
  drive.open();
  drive.reads[0]!([category("a", "Apples"), category("b", "Bananas")]);
  await live.ready;
  drive.send({ kind: "RESYNC", id: "", category: null });
  expect(drive.reads).toHaveLength(2);
  // The stream dropped before an event and opened again without a cursor: a third read; the second is stale.
  drive.open();
  const read = new Promise<void>((resolve) => (changed = resolve));
  // The stale answer first: by the time the later read's change is heard, the stale one has been handled.
  drive.reads[1]!([category("a", "Apples"), category("z", "Zucchini")]);
  drive.reads[2]!([category("b", "Bananas")]);
  await read;
  expect(seen).toEqual([["a", "b"], ["b"]]);
  expect(live.items.map((item) => item.id)).toEqual(["b"]);
});

test("a refusal stops the list: onError once, ready rejects, the subscription ends", async () => {
  const drive = handDriven();
  const errors: string[] = [];
  const live = liveList(drive.source, { onError: (error) => errors.push(error.code) });
  const refusal = { code: "too_many_subscriptions", status: 429 } as SvcError;
  drive.refuse(refusal);
  expect(await failure(live.ready)).toBe(refusal);
  expect(errors).toEqual(["too_many_subscriptions"]);
  expect(drive.unsubscribed()).toBe(true);
});
