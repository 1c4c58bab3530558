// Realtime: `subscription { categoryEvents }` over Server-Sent Events (graphql-sse's reference
// client, distinct connections mode) and over WebSocket (graphql-ws's reference client, the
// graphql-transport-ws protocol), against a listening svc. On SQLite and (test:postgres) on
// PostgreSQL, where the events travel through LISTEN/NOTIFY. How streams end is in
// subscriptions-lifetimes.test.ts, resuming by cursor in subscriptions-resume.test.ts.
import { afterEach, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { SignJWT } from "jose";
import { promote, TEST_SECRET } from "../helpers.ts";
import { listening, opened, sse, stopAll, subscribeBySse, TRANSPORTS, ws } from "../subscriptions.ts";

afterEach(stopAll);

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

  test("with a token signed by another algorithm, without exp or unsigned: refused, nothing opened", async () => {
    const svc = await listening();
    const { user } = await svc.signUp();
    const key = new TextEncoder().encode(TEST_SECRET);
    const iat = Math.floor(Date.now() / 1000);
    const claims = { sub: user.id, ver: 0, iss: "svc", jti: "j", iat };
    const sign = (alg: string, extra: object) =>
      new SignJWT({ ...claims, ...extra }).setProtectedHeader({ alg, typ: "JWT" }).sign(key);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const forged = [
      await sign("HS512", { exp: iat + 60 }),
      await sign("HS256", {}),
      `${part({ alg: "none", typ: "JWT" })}.${part({ ...claims, exp: iat + 60 })}.`,
    ];
    for (const token of forged) expect(await open(svc.url, token).ended).not.toBe("complete");
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
