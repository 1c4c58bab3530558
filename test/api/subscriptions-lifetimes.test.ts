// Realtime: how a subscription's stream ends (an expired token or session, a subscriber that stops
// reading), and what keeps it open (heartbeats), over SSE and WebSocket against a listening svc.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { connect } from "node:net";
import { testConfig } from "../helpers.ts";
import { listening, opened, sse, stopAll, subscribeBySse, ws } from "../subscriptions.ts";
import { waitUntil } from "../support/wait.ts";

afterEach(stopAll);

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
      await waitUntil(
        async () => {
          // Paced, so that a reader in this very process (the one that keeps up) gets its turns.
          for (let i = 0; i < 100; i++, n++)
            await svc.store.categories.update(id, { description: `${description}${n}` }, new Date().toISOString());
          return /^svc_subscriptions_dropped_total\{reason="slow".*\} 1$/m.test(
            (await svc.call("GET", "/svc/metrics")).text,
          );
        },
        { what: "the stalled subscriber dropped", timeoutMs: 20_000, everyMs: 5 },
      );
      await opened(svc, 1);
      // The reader that kept up saw every one of them.
      await fast.count(n + 1, 10_000);
      expect(fast.results.at(-1)!.data?.categoryEvents.category?.version).toBe(n + 1);
      stalled.destroy();
    },
    30_000,
  );
});
