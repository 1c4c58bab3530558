// Realtime: resuming `categoryEvents` after a cursor, over SSE and WebSocket and by Last-Event-ID, and
// cursors across database files (SQLite), against a listening svc.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp, testConfig } from "../helpers.ts";
import { listen, listening, opened, RESUMABLE, type Received, sse, stopAll, TRANSPORTS } from "../subscriptions.ts";
import { captureCli } from "../support/cli.ts";

afterEach(stopAll);

describe.each(TRANSPORTS)("resuming over %s", (_, open) => {
  /** Creates categories by name, as ann. */
  async function create(svc: Awaited<ReturnType<typeof listening>>, token: string, ...names: string[]) {
    for (const name of names) {
      const made = await svc.graphql(`mutation { createCategory(input: { name: "${name}" }) { id } }`, { token });
      expect(made.body.errors).toBeUndefined();
    }
  }
  const names = (stream: Received) =>
    stream.results.map((r) => r.data?.categoryEvents.category?.name ?? r.data?.categoryEvents.kind);
  const cursors = (stream: Received) => stream.results.map((r) => r.data!.categoryEvents.cursor!);
  /** A subscriber that saw A, B and C created, then went away: the cursors it was given. */
  async function sawThree(svc: Awaited<ReturnType<typeof listening>>, token: string) {
    const first = open(svc.url, token, RESUMABLE);
    await opened(svc, 1);
    await create(svc, token, "A", "B", "C");
    await first.count(3);
    first.stop();
    await opened(svc, 0);
    return cursors(first);
  }

  test("every event carries a cursor, increasing; after one, what followed comes first, then live: no gap, no duplicate", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const seen = await sawThree(svc, ann.token);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(3);
    // Missed while away.
    await create(svc, ann.token, "D", "E");
    const resumed = open(svc.url, ann.token, RESUMABLE, { after: seen[1] });
    await resumed.count(3);
    await opened(svc, 1);
    await create(svc, ann.token, "F");
    await resumed.count(4);
    expect(names(resumed)).toEqual(["C", "D", "E", "F"]);
    expect(cursors(resumed)[0]).toBe(seen[2]!);
  });

  test("the last cursor resumes with live events only; a cursor the log no longer holds gets one RESYNC first", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const [oldest, , newest] = await sawThree(svc, ann.token);
    const current = open(svc.url, ann.token, RESUMABLE, { after: newest });
    await opened(svc, 1);
    // All but the newest change forgotten (SVC_EVENTS_KEEP=1): A's cursor is no longer covered.
    await svc.store.categoryEvents.prune(1, "1970-01-01T00:00:00.000Z", 100);
    const stale = open(svc.url, ann.token, RESUMABLE, { after: oldest });
    await opened(svc, 2);
    await create(svc, ann.token, "D");
    await current.count(1);
    await stale.count(2);
    expect(names(current)).toEqual(["D"]);
    expect(names(stale)).toEqual(["RESYNC", "D"]);
    // A RESYNC's cursor is where to carry on from: D follows it.
    expect(cursors(stale)[0]! < cursors(stale)[1]!).toBe(true);
  });

  test("a cursor from another database: RESYNC first; text that is no cursor: BAD_USER_INPUT", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const other = open(svc.url, ann.token, RESUMABLE, { after: "0000000000000001.00000000000000ff" });
    await opened(svc, 1);
    await create(svc, ann.token, "A");
    await other.count(2);
    expect(names(other)).toEqual(["RESYNC", "A"]);
    const bad = open(svc.url, ann.token, RESUMABLE, { after: "not a cursor" });
    await bad.count(1);
    expect(bad.results[0]!.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });

  test("after the token expires, a fresh token and the last cursor miss nothing", async () => {
    const config = testConfig();
    const svc = await listening({ jwt: { ...config.jwt, ttlSeconds: 1 } });
    const start = Math.ceil(Date.now() / 1000) * 1000 + 10;
    setSystemTime(new Date(start));
    try {
      const ann = await svc.signUp("ann");
      const stream = open(svc.url, ann.token, RESUMABLE);
      await opened(svc, 1);
      await create(svc, ann.token, "A");
      await stream.count(1);
      setSystemTime(new Date(start + 1100));
      await stream.count(2);
      expect(stream.results[1]!.errors?.[0]?.extensions?.code).toBe("TOKEN_EXPIRED");
      const last = stream.results[0]!.data!.categoryEvents.cursor;
      // Written while the client renews its token.
      const fresh = await svc.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "ann", password: ann.password },
      });
      await create(svc, fresh.body.token, "B");
      const again = open(svc.url, fresh.body.token, RESUMABLE, { after: last });
      await again.count(1);
      expect(names(again)).toEqual(["B"]);
    } finally {
      setSystemTime();
    }
  });
});

describe("resuming by Last-Event-ID (SSE)", () => {
  test("each event's id: line is its cursor, and Last-Event-ID resumes after it", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const first = sse(svc.url, ann.token, RESUMABLE);
    await opened(svc, 1);
    const made = await svc.graphql('mutation { createCategory(input: { name: "A" }) { id } }', { token: ann.token });
    expect(made.body.errors).toBeUndefined();
    await first.count(1);
    const cursor = first.results[0]!.data!.categoryEvents.cursor!;
    first.stop();
    await opened(svc, 0);
    await svc.graphql('mutation { createCategory(input: { name: "B" }) { id } }', { token: ann.token });
    const controller = new AbortController();
    const response = await fetch(svc.url, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${ann.token}`,
        "last-event-id": cursor,
      },
      body: JSON.stringify({ query: RESUMABLE }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes('"B"')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).not.toContain('"A"');
    const id = /^id: (.+)$/m.exec(text)?.[1];
    const data = JSON.parse(/^data: (.+)$/m.exec(text)![1]!);
    expect(id).toBe(data.data.categoryEvents.cursor);
  });
});

// A database file made as `svc serve` makes one (the empty database written whole), and `svc restore`
// into it: what a cursor from another database, or from history a restore discarded, is answered with.
describe.skipIf(process.env.TEST_DATABASE === "postgres")("cursors across database files (SQLite)", () => {
  const made: { dir: string; stores: VersionedStore[] }[] = [];
  afterEach(async () => {
    for (const { dir, stores } of made.splice(0)) {
      for (const store of stores) await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  function folder() {
    const entry = { dir: mkdtempSync(join(tmpdir(), "svc-cursors-")), stores: [] as VersionedStore[] };
    made.push(entry);
    return {
      path: (name: string) => join(entry.dir, name),
      open: async (name: string) => {
        const store = await openSqliteStore(join(entry.dir, name));
        entry.stores.push(store);
        return listen(await testApp({ on: store }));
      },
    };
  }
  const names = (stream: Received) =>
    stream.results.map((r) => r.data?.categoryEvents.category?.name ?? r.data?.categoryEvents.kind);
  async function create(
    svc: { graphql: (q: string, o: { token: string }) => Promise<{ body: any }> },
    token: string,
    ...list: string[]
  ) {
    for (const name of list) {
      const made = await svc.graphql(`mutation { createCategory(input: { name: "${name}" }) { id } }`, { token });
      expect(made.body.errors).toBeUndefined();
    }
  }

  test("two new databases: a cursor from one gets RESYNC first on the other, and misses nothing", async () => {
    const files = folder();
    const one = await files.open("one.db");
    const two = await files.open("two.db");
    const ann = await one.signUp("ann");
    const seen = sse(one.url, ann.token, RESUMABLE);
    await opened(one, 1);
    await create(one, ann.token, "A");
    await seen.count(1);
    const cursor = seen.results[0]!.data!.categoryEvents.cursor!;
    const bob = await two.signUp("bob");
    // Numbered as A was, in its own database.
    await create(two, bob.token, "B1");
    const elsewhere = sse(two.url, bob.token, RESUMABLE, { after: cursor });
    await opened(two, 1);
    await create(two, bob.token, "B2");
    await elsewhere.count(2);
    expect(names(elsewhere)).toEqual(["RESYNC", "B2"]);
  });

  test("after svc restore, a cursor from the history it discarded gets RESYNC first, and misses nothing", async () => {
    const files = folder();
    const env = { SVC_DATABASE_URL: `sqlite:${files.path("svc.db")}` };
    // Brought back beside it, as onto a new disk (svc.db itself stays open in this process).
    const restoredEnv = { SVC_DATABASE_URL: `sqlite:${files.path("restored.db")}` };
    let svc = await files.open("svc.db");
    const ann = await svc.signUp("ann");
    await create(svc, ann.token, "A", "B", "C");
    const backup = await captureCli(["backup", files.path("snapshot.db")], env);
    expect(backup.code, backup.err).toBe(0);
    const before = sse(svc.url, ann.token, RESUMABLE);
    await opened(svc, 1);
    await create(svc, ann.token, "D");
    await before.count(1);
    const cursor = before.results[0]!.data!.categoryEvents.cursor!;
    before.stop();
    const restore = await captureCli(["restore", "--from", files.path("snapshot.db")], restoredEnv);
    expect(restore.code, restore.err).toBe(0);
    svc = await files.open("restored.db");
    // After the restore, changes are numbered on from C's: D's number again, then the next.
    await create(svc, ann.token, "E");
    const after = sse(svc.url, ann.token, RESUMABLE, { after: cursor });
    await opened(svc, 1);
    await create(svc, ann.token, "F");
    await after.count(2);
    expect(names(after)).toEqual(["RESYNC", "F"]);
  });
});
