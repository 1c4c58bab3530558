// Realtime: `subscription { categoryEvents }` over Server-Sent Events (graphql-sse's reference
// client, distinct connections mode) and over WebSocket (graphql-ws's reference client, the
// graphql-transport-ws protocol), against a listening svc. On SQLite and (test:postgres) on
// PostgreSQL, where the events travel through LISTEN/NOTIFY.
import { afterEach, describe, expect, test } from "bun:test";
import { createClient as createSseClient } from "graphql-sse";
import { createClient as createWsClient } from "graphql-ws";
import { testApp, type ConfigOverrides } from "../helpers.ts";

const EVENTS = "subscription { categoryEvents { kind id category { name version } } }";

type Event = { kind: string; id: string; category: { name: string; version: number } | null };
type Result = {
  data?: { categoryEvents: Event } | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
};

const stops: Array<() => unknown> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A listening svc, stopped after the test. */
async function listening(config: ConfigOverrides = {}) {
  const svc = await testApp({ config });
  const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
  stops.push(() => server.stop(true));
  stops.push(() => svc.app.closeStreams());
  const url = `http://127.0.0.1:${server.port}/graphql`;
  return { ...svc, server, url };
}

/** What a subscription has received so far, and its end. */
interface Received {
  results: Result[];
  ended: Promise<"complete" | unknown>;
  /** Resolves once `n` results have come (or rejects after `ms`). */
  count(n: number, ms?: number): Promise<Result[]>;
  stop(): void;
}

function collector(
  start: (sink: { next(r: Result): void; error(e: unknown): void; complete(): void }) => () => void,
): Received {
  const results: Result[] = [];
  let waiters: Array<() => void> = [];
  let finish!: (how: unknown) => void;
  const ended = new Promise<unknown>((resolve) => (finish = resolve));
  const stop = start({
    next(result) {
      results.push(result);
      for (const wake of waiters.splice(0)) wake();
    },
    error(error) {
      finish(error);
      for (const wake of waiters.splice(0)) wake();
    },
    complete() {
      finish("complete");
      for (const wake of waiters.splice(0)) wake();
    },
  });
  stops.push(stop);
  return {
    results,
    ended,
    stop,
    async count(n, ms = 3000) {
      const deadline = Date.now() + ms;
      while (results.length < n) {
        if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${n} results, got ${JSON.stringify(results)}`);
        await Promise.race([new Promise<void>((wake) => waiters.push(wake)), Bun.sleep(50)]);
      }
      return results;
    },
  };
}

function sse(url: string, token: string | null, query = EVENTS): Received {
  const client = createSseClient({
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
  stops.push(() => client.dispose());
  return collector((sink) => client.subscribe({ query }, sink as never));
}

function ws(url: string, token: string | null, query = EVENTS): Received {
  const client = createWsClient({
    url: url.replace(/^http/, "ws"),
    connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: false,
  });
  stops.push(() => client.dispose());
  return collector((sink) => client.subscribe({ query }, sink as never));
}

const TRANSPORTS = [
  ["SSE", sse],
  ["WebSocket", ws],
] as const;

/** Waits until the instance counts `n` open subscriptions (a subscription is live once counted). */
async function opened(svc: Awaited<ReturnType<typeof listening>>, n: number) {
  for (let waited = 0; waited < 3000; waited += 20) {
    const metrics = (await svc.call("GET", "/svc/metrics")).text;
    const open = [...metrics.matchAll(/^svc_subscriptions_open\{.*\} (\d+)$/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    if (open === n) return;
    await Bun.sleep(20);
  }
  throw new Error(`never ${n} open subscriptions`);
}

describe.each(TRANSPORTS)("categoryEvents over %s", (_, open) => {
  test("create, update and delete arrive in order, each within a second of the mutation's answer", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const events = open(svc.url, ann.token);
    await opened(svc, 1);
    const made = await svc.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', {
      token: ann.token,
    });
    const id = made.body.data.createCategory.id;
    let at = Date.now();
    await events.count(1, 1000);
    const latencies = [Date.now() - at];
    await svc.graphql(`mutation { updateCategory(id: "${id}", input: { name: "Novels" }) { id } }`, {
      token: ann.token,
    });
    at = Date.now();
    await events.count(2, 1000);
    latencies.push(Date.now() - at);
    await svc.graphql(`mutation { deleteCategory(id: "${id}") }`, { token: ann.token });
    await events.count(3, 1000);
    expect(events.results).toEqual([
      { data: { categoryEvents: { kind: "CREATED", id, category: { name: "Books", version: 1 } } } },
      { data: { categoryEvents: { kind: "UPDATED", id, category: { name: "Novels", version: 2 } } } },
      { data: { categoryEvents: { kind: "DELETED", id, category: null } } },
    ]);
    expect(Math.max(...latencies)).toBeLessThan(1000);
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
    for (const received of [one, two]) {
      await received.count(2);
      await Bun.sleep(100);
      expect(received.results.map((r) => r.data?.categoryEvents.category?.name)).toEqual(["Books", "Maps"]);
    }
  });

  test("without a token, where SVC_GRAPHQL_AUTH requires one: refused, nothing opened", async () => {
    const svc = await listening();
    const refused = open(svc.url, null);
    const how = await refused.ended;
    expect(how).not.toBe("complete");
    await opened(svc, 0);
  });

  test("the token's session ends (logout): the stream ends with UNAUTHENTICATED within 5 seconds", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const events = open(svc.url, ann.token);
    await opened(svc, 1);
    expect((await svc.call("POST", "/svc-api/v1/auth/logout", { token: ann.token })).status).toBe(204);
    const at = Date.now();
    await events.count(1, 5000);
    expect(events.results[0]!.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(await events.ended).toBe("complete");
    expect(Date.now() - at).toBeLessThan(5000);
    await opened(svc, 0);
  });

  test("the account deleted or disabled: its streams end with UNAUTHENTICATED", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const events = open(svc.url, ann.token);
    await opened(svc, 1);
    expect((await svc.call("DELETE", "/svc-api/v1/users", { token: ann.token })).status).toBe(204);
    await events.count(1, 5000);
    expect(events.results[0]!.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(await events.ended).toBe("complete");
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
    const refused = await fetch(svc.url, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${bob.token}`,
      },
      body: JSON.stringify({ query: EVENTS }),
    });
    const text = await refused.text();
    expect(text).toContain('"code":"TOO_MANY_SUBSCRIPTIONS"');
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
  });

  test("without a token where one is required: 401, as for queries", async () => {
    const svc = await listening();
    const refused = await fetch(svc.url, {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ query: EVENTS }),
    });
    expect(refused.status).toBe(401);
    await refused.text();
  });

  test("a client that goes away frees its subscription", async () => {
    const svc = await listening();
    const ann = await svc.signUp("ann");
    const abort = new AbortController();
    const response = await fetch(svc.url, {
      method: "POST",
      headers: {
        accept: "text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${ann.token}`,
      },
      body: JSON.stringify({ query: EVENTS }),
      signal: abort.signal,
    });
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
