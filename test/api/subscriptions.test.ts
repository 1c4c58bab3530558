// Realtime: `subscription { categoryEvents }` over Server-Sent Events (graphql-sse's reference
// client, distinct connections mode) and over WebSocket (graphql-ws's reference client, the
// graphql-transport-ws protocol), against a listening svc. On SQLite and (test:postgres) on
// PostgreSQL, where the events travel through LISTEN/NOTIFY.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../src/cli.ts";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp, testConfig, type ConfigOverrides, promote } from "../helpers.ts";
import { EVENTS, listen, opened, RESUMABLE, type Received, sse, stopAll, ws } from "../subscriptions.ts";

afterEach(stopAll);

/** A subscription request by SSE as any HTTP client sends it: the raw answer, its stream unread. */
function subscribeBySse(url: string, token: string | null, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      accept: "text/event-stream",
      "content-type": "application/json",
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query: EVENTS }),
    signal,
  });
}

/** A listening svc. */
const listening = async (config: ConfigOverrides = {}) => listen(await testApp({ config }));

const TRANSPORTS = [
  ["SSE", sse],
  ["WebSocket", ws],
] as const;

describe.each(TRANSPORTS)("categoryEvents over %s", (_, open) => {
  test("create, update and delete arrive in order, each once", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const events = open(svc.url, ann.token);
    await opened(svc, 1);
    const made = await svc.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', {
      token: ann.token,
    });
    const id = made.body.data.createCategory.id;
    await events.count(1);
    await svc.graphql(`mutation { updateCategory(id: "${id}", input: { name: "Novels" }) { id } }`, {
      token: ann.token,
    });
    await events.count(2);
    await svc.graphql(`mutation { deleteCategory(id: "${id}") }`, { token: ann.token });
    await events.count(3);
    expect(events.results).toEqual([
      { data: { categoryEvents: { kind: "CREATED", id, category: { name: "Books", version: 1 } } } },
      { data: { categoryEvents: { kind: "UPDATED", id, category: { name: "Novels", version: 2 } } } },
      { data: { categoryEvents: { kind: "DELETED", id, category: null } } },
    ]);
  });

  test("a failed write sends nothing; every subscriber gets every event", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const bob = await svc.signUp("bob");
    const [one, two] = [open(svc.url, ann.token), open(svc.url, bob.token)];
    await opened(svc, 2);
    await svc.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token: ann.token });
    const clash = await svc.graphql('mutation { createCategory(input: { name: "BOOKS" }) { id } }', {
      token: bob.token,
    });
    expect(clash.body.errors[0].extensions.code).toBe("CONFLICT");
    await svc.graphql('mutation { createCategory(input: { name: "Maps" }) { id } }', { token: bob.token });
    // Events arrive in commit order: once a write made after every other has come, nothing else is on its way.
    await svc.graphql('mutation { createCategory(input: { name: "Sentinel" }) { id } }', { token: bob.token });
    for (const received of [one, two]) {
      await received.count(3);
      expect(received.results.map((r) => r.data?.categoryEvents.category?.name)).toEqual(["Books", "Maps", "Sentinel"]);
    }
  });

  test("without a token, where SVC_GRAPHQL_AUTH requires one: refused, nothing opened", async () => {
    const svc = await listening();
    const refused = open(svc.url, null);
    const how = await refused.ended;
    expect(how).not.toBe("complete");
    await opened(svc, 0);
  });

  test("the token's session ends (logout): the stream ends with UNAUTHENTICATED at the next recheck", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const events = open(svc.url, ann.token);
    await opened(svc, 1);
    expect((await svc.call("POST", "/svc-api/v1/auth/logout", { token: ann.token })).status).toBe(204);
    await events.count(1);
    expect(events.results[0]!.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(await events.ended).toBe("complete");
    await opened(svc, 0);
  });

  test("the account deleted or disabled: its streams end with UNAUTHENTICATED, counted as revoked", async () => {
    const svc = await listening();
    const root = await svc.signUp("root");
    await promote(svc.store, root.user.id);
    const [ann, bob] = [await svc.signUp("ann"), await svc.signUp("bob")];
    const [deleted, disabled] = [open(svc.url, ann.token), open(svc.url, bob.token)];
    await opened(svc, 2);
    expect((await svc.call("DELETE", "/svc-api/v1/users", { token: ann.token })).status).toBe(204);
    const off = await svc.call("PATCH", `/svc-api/v1/admin/users/${bob.user.id}`, {
      token: root.token,
      body: { status: "disabled" },
    });
    expect(off.status).toBe(200);
    for (const events of [deleted, disabled]) {
      await events.count(1, 5000);
      expect(events.results[0]!.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
      expect(await events.ended).toBe("complete");
    }
    expect((await svc.call("GET", "/svc/metrics")).text).toMatch(
      /^svc_subscriptions_dropped_total\{reason="revoked",service="svc"\} 2$/m,
    );
  });

  test("SVC_SUBSCRIPTIONS_PER_USER: one more is refused with TOO_MANY_SUBSCRIPTIONS; the others go on", async () => {
    const svc = await listening({ subscriptions: { perUser: 2, max: 100 } });
    const ann = await svc.signUp("ann");
    const kept = [open(svc.url, ann.token), open(svc.url, ann.token)];
    await opened(svc, 2);
    const third = open(svc.url, ann.token);
    const how = (await Promise.race([third.ended, third.count(1).then(() => "result")])) as { response?: Response };
    // graphql-sse reports the 429 answer as a NetworkError holding the response; graphql-ws, as an error result.
    const refusal = how.response
      ? { status: how.response.status, body: await how.response.text() }
      : { status: 429, body: JSON.stringify(third.results[0]) };
    expect(refusal.status).toBe(429);
    expect(refusal.body).toContain("TOO_MANY_SUBSCRIPTIONS");
    await opened(svc, 2);
    await svc.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token: ann.token });
    for (const received of kept) await received.count(1);
  });
});

describe("subscriptions over HTTP", () => {
  test("SVC_SUBSCRIPTIONS_MAX refuses the next with 429 TOO_MANY_SUBSCRIPTIONS and Retry-After", async () => {
    const svc = await listening({ subscriptions: { perUser: 10, max: 1 } });
    const ann = await svc.signUp("ann");
    sse(svc.url, ann.token);
    await opened(svc, 1);
    const bob = await svc.signUp("bob");
    const refused = await subscribeBySse(svc.url, bob.token);
    const text = await refused.text();
    expect(text).toContain('"code":"TOO_MANY_SUBSCRIPTIONS"');
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
  });

  test("a WebSocket handshake without the graphql-transport-ws subprotocol: 400 validation_failed naming it", async () => {
    const svc = await listening();
    const refused = await fetch(svc.url, {
      headers: {
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
        "sec-websocket-protocol": "graphql-ws",
      },
    });
    expect(refused.status).toBe(400);
    const problem = (await refused.json()) as { code: string; errors: Array<{ field: string }> };
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors[0]!.field).toBe("Sec-WebSocket-Protocol");
  });

  test("without a token where one is required: 401, as for queries", async () => {
    const svc = await listening();
    const refused = await subscribeBySse(svc.url, null);
    expect(refused.status).toBe(401);
    await refused.text();
  });

  test("a client that goes away frees its subscription", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const abort = new AbortController();
    const response = await subscribeBySse(svc.url, ann.token, abort.signal);
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    await opened(svc, 1);
    abort.abort();
    await opened(svc, 0);
  });

  test("closing the streams (as SIGTERM does) completes every subscription, on both transports", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const streams = [sse(svc.url, ann.token), ws(svc.url, ann.token)];
    await opened(svc, 2);
    await svc.app.closeStreams();
    for (const stream of streams) expect(await stream.ended).toBe("complete");
  });
});

describe("GraphQL over WebSocket", () => {
  // As the SSE test above: the hub's queue is kept short of the socket's 1 MiB, so the socket's limit is what drops it.
  test.skipIf(process.env.TEST_DATABASE === "postgres")(
    "a subscriber that stops reading its socket is dropped once 1 MiB waits for it; the others get every event",
    async () => {
      const svc = await listening({ subscriptions: { buffer: 1024 } });
      const ann = await svc.signUp("ann");
      const fast = ws(svc.url, ann.token);
      // A client that subscribes over WebSocket and then never reads from its socket.
      const stalled = connect(Number(new URL(svc.url).port), "127.0.0.1");
      stalled.write(
        "GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
          "Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n",
      );
      stalled.write(
        clientFrame(JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${ann.token}` } })),
      );
      let heard = "";
      await new Promise<void>((acknowledged) =>
        stalled.on("data", (chunk) => {
          heard += chunk.toString("latin1");
          if (heard.includes("connection_ack")) acknowledged();
        }),
      );
      stalled.removeAllListeners("data");
      stalled.pause();
      const query = "subscription { categoryEvents { kind id category { description } } }";
      stalled.write(clientFrame(JSON.stringify({ id: "1", type: "subscribe", payload: { query } })));
      await opened(svc, 2);
      const made = await svc.graphql(`mutation { createCategory(input: { name: "Busy" }) { id } }`, {
        token: ann.token,
      });
      const id = made.body.data.createCategory.id;
      // Written through the store, past the API's 500 characters, to fill buffers sooner.
      const description = "x".repeat(32_000);
      const dropped = /^svc_subscriptions_dropped_total\{reason="slow".*\} 1$/m;
      let n = 0;
      for (let round = 0; round < 200; round++) {
        // Paced, so that the reader in this very process gets its turns.
        for (let i = 0; i < 20; i++, n++)
          await svc.store.categories.update(id, { description: `${description}${n}` }, new Date().toISOString());
        await fast.count(n + 1, 10_000);
        if (dropped.test((await svc.call("GET", "/svc/metrics")).text)) break;
      }
      const metrics = (await svc.call("GET", "/svc/metrics")).text;
      expect(metrics.match(/^svc_subscriptions_dropped_total\{reason="slow".*$/m)?.[0]).toMatch(dropped);
      await opened(svc, 1);
      expect(fast.results.at(-1)!.data?.categoryEvents.category?.version).toBe(n + 1);
      stalled.destroy();
    },
  );

  test("where introspection is off, an introspection query over WebSocket is refused as over HTTP", async () => {
    const svc = await listening({ graphql: { introspection: false } });
    const ann = await svc.signUp("ann");
    const asked = ws(svc.url, ann.token, "{ __schema { queryType { name } } }");
    // graphql-ws sends a refusal in validation as the operation's error, and no result.
    const refusal = (await asked.ended) as Array<{ message: string }>;
    expect(asked.results).toEqual([]);
    expect(refusal[0]!.message).toContain("introspection has been disabled");
  });
});

/** A client frame (masked, as RFC 6455 has clients send them) holding one text message. */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const length =
    payload.length < 126
      ? Buffer.from([0x80 | payload.length])
      : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = payload.map((byte, i) => byte ^ mask[i % 4]!);
  return Buffer.concat([Buffer.from([0x81]), length, mask, masked]);
}

describe("subscription metrics", () => {
  test("count open subscriptions by transport and the events sent", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const streams = [sse(svc.url, ann.token), ws(svc.url, ann.token)];
    await opened(svc, 2);
    const metrics = (await svc.call("GET", "/svc/metrics")).text;
    expect(metrics).toMatch(/^svc_subscriptions_open\{transport="sse",service="svc"\} 1$/m);
    expect(metrics).toMatch(/^svc_subscriptions_open\{transport="ws",service="svc"\} 1$/m);
    await svc.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token: ann.token });
    for (const stream of streams) await stream.count(1);
    expect((await svc.call("GET", "/svc/metrics")).text).toMatch(
      /^svc_subscription_events_sent_total\{service="svc"\} 2$/m,
    );
  });
});

describe("stream lifetimes", () => {
  test("a token that expires ends its streams with TOKEN_EXPIRED (at the next recheck, at the latest)", async () => {
    const config = testConfig();
    const svc = await listening({ jwt: { ...config.jwt, ttlSeconds: 1 } });
    // exp is in whole seconds: the clock stands just after a second starts while both streams open (the
    // first waits for the GraphQL engine to load), then moves past the token's second.
    const start = Math.ceil(Date.now() / 1000) * 1000 + 10;
    setSystemTime(new Date(start));
    try {
      const ann = await svc.signUp("ann");
      const streams = [sse(svc.url, ann.token), ws(svc.url, ann.token)];
      await opened(svc, 2);
      setSystemTime(new Date(start + 1100));
      for (const stream of streams) {
        await stream.count(1);
        expect(stream.results[0]!.errors?.[0]?.extensions?.code).toBe("TOKEN_EXPIRED");
        expect(await stream.ended).toBe("complete");
      }
    } finally {
      setSystemTime();
    }
  });

  test("a session that reaches its expires_at ends its streams with UNAUTHENTICATED, as a revoked one does", async () => {
    const svc = await listening({ sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 60, reuseWindowMs: 10_000 } });
    const ann = await svc.signUp("ann");
    const streams = [sse(svc.url, ann.token), ws(svc.url, ann.token)];
    await opened(svc, 2);
    // Past the session's limit, well before its access token's 15 minutes: only expires_at can end them.
    setSystemTime(new Date(Date.now() + 61_000));
    try {
      for (const stream of streams) {
        await stream.count(1, 5000);
        expect(stream.results[0]!.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
        expect(await stream.ended).toBe("complete");
      }
    } finally {
      setSystemTime();
    }
    expect((await svc.call("GET", "/svc/metrics")).text).toMatch(
      /^svc_subscriptions_dropped_total\{reason="revoked",service="svc"\} 2$/m,
    );
  }, 15_000);

  test("SVC_GRAPHQL_AUTH=off: anyone may subscribe, capped per client address", async () => {
    const svc = await listening({ graphql: { auth: "off" }, subscriptions: { perUser: 1, max: 100 } });
    const first = sse(svc.url, null);
    await opened(svc, 1);
    const second = await subscribeBySse(svc.url, null);
    expect(second.status).toBe(429);
    await second.text();
    await svc.graphql('mutation { createCategory(input: { name: "Open" }) { id } }');
    expect((await first.count(1))[0]!.data?.categoryEvents.category?.name).toBe("Open");
  });

  test("an idle SSE stream gets heartbeats (comment lines) that keep proxies from cutting it", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const response = await subscribeBySse(svc.url, ann.token);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    // Yoga pings every 12 s, and every 300 ms under NODE_ENV=test (as bun test runs): two pings after the first.
    const until = Date.now() + 3000;
    while ((text.match(/^:\n\n/gm)?.length ?? 0) < 3 && Date.now() < until) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text.match(/^:\n\n/gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
    await reader.cancel();
  });

  // The hub and the transports are alike on every database; on PostgreSQL the ~27,000 writes it takes
  // to fill a stalled reader's buffers would run past the test's time.
  test.skipIf(process.env.TEST_DATABASE === "postgres")(
    "a subscriber that stops reading is dropped once its buffer is full, and the others still get every event",
    async () => {
      // A buffer that a reader in this very process (the one that keeps up) cannot fall behind by between turns.
      const svc = await listening({ subscriptions: { buffer: 200 } });
      const ann = await svc.signUp("ann");
      const fast = sse(svc.url, ann.token);
      // A client that opens a stream and never reads from its socket.
      const port = new URL(svc.url).port;
      // It asks for the description too: long ones fill its socket's buffers in a few hundred events.
      const body = JSON.stringify({ query: "subscription { categoryEvents { kind id category { description } } }" });
      const stalled = connect(Number(port), "127.0.0.1");
      stalled.pause();
      stalled.write(
        `POST /graphql HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nAuthorization: Bearer ${ann.token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await opened(svc, 2);
      // Written through the store, as mutations' are, and past the API's 500 characters to fill buffers sooner.
      const description = "x".repeat(32_000);
      const made = await svc.graphql(`mutation { createCategory(input: { name: "Busy" }) { id } }`, {
        token: ann.token,
      });
      const id = made.body.data.createCategory.id;
      let n = 0;
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        // Paced, so that a reader in this very process (the one that keeps up) gets its turns.
        for (let i = 0; i < 100; i++, n++)
          await svc.store.categories.update(id, { description: `${description}${n}` }, new Date().toISOString());
        await Bun.sleep(5);
        if (
          (await svc.call("GET", "/svc/metrics")).text.match(/^svc_subscriptions_dropped_total\{reason="slow".*\} 1$/m)
        )
          break;
      }
      await opened(svc, 1);
      // The reader that kept up saw every one of them.
      await fast.count(n + 1, 10_000);
      expect(fast.results.at(-1)!.data?.categoryEvents.category?.version).toBe(n + 1);
      stalled.destroy();
    },
    30_000,
  );
});

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
    const said: string[] = [];
    const io = { out: { write: () => true }, err: { write: (text: string) => said.push(text) } };
    let svc = await files.open("svc.db");
    const ann = await svc.signUp("ann");
    await create(svc, ann.token, "A", "B", "C");
    expect(await runCli(["backup", files.path("snapshot.db")], env, io)).toBe(0);
    const before = sse(svc.url, ann.token, RESUMABLE);
    await opened(svc, 1);
    await create(svc, ann.token, "D");
    await before.count(1);
    const cursor = before.results[0]!.data!.categoryEvents.cursor!;
    before.stop();
    expect(await runCli(["restore", "--from", files.path("snapshot.db")], restoredEnv, io), said.join("")).toBe(0);
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
