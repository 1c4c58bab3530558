// The outer handler: what every request gets on its way in and out of Elysia (a request id, the headers
// every answer carries, the body limit, metrics and an access line under its route's template).
import { afterAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { Elysia } from "elysia";
import { outerHandler } from "../../src/http/outer-handler.ts";
import { allowedMethods } from "../../src/http/allowed-methods.ts";
import { createLoggers } from "../../src/observability/log.ts";
import { type CallOptions, expectProblem, type Reply, testApp } from "../helpers.ts";

const PROBES = ["/svc/health", "/svc/health/live", "/svc/health/ready"];

function stamp(headers: Headers) {
  return {
    contentType: headers.get("content-type"),
    cacheControl: headers.get("cache-control"),
    nosniff: headers.get("x-content-type-options"),
    requestId: headers.get("x-request-id"),
  };
}

describe("health probes", () => {
  test.each(PROBES)("%s answers with the headers every answer carries, and CORS's where it is open", async (path) => {
    const closed = await testApp();
    const open = await testApp({ config: { corsOrigins: ["https://app.example"] } });
    const headers = { "x-request-id": "probe-1", origin: "https://app.example" };
    const a = await closed.call("GET", path, { headers });
    const b = await open.call("GET", path, { headers });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const { uptime_s: _a, ...bodyA } = a.body;
    const { uptime_s: _b, ...bodyB } = b.body;
    expect(bodyA).toEqual(bodyB);
    expect(stamp(a.headers)).toEqual({
      contentType: "application/json",
      cacheControl: "no-store",
      nosniff: "nosniff",
      requestId: "probe-1",
    });
    expect(stamp(b.headers)).toEqual(stamp(a.headers));
    expect(a.headers.get("access-control-allow-origin")).toBeNull();
    expect(b.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  test("are logged and counted like any request, under their own route", async () => {
    const { call, logs } = await testApp();
    await call("GET", "/svc/health?from=probe", { headers: { "x-request-id": "probe-log" } });
    const line = (await logs())
      .map((l) => JSON.parse(l))
      .find((l) => l.client_request_id === "probe-log" && l.msg === "request completed");
    expect(line).toMatchObject({ method: "GET", route: "/svc/health", path: "/svc/health", status: 200 });
    const metrics = await call("GET", "/svc/metrics");
    expect(metrics.text).toMatch(/svc_http_requests_total\{[^}]*route="\/svc\/health"[^}]*status="200"[^}]*\} 1/);
  });
});

describe("the busiest reads", () => {
  const query = "{ categories { id name description colorHex icon } }";
  async function reader() {
    const app = await testApp();
    const { token, user } = await app.signUp("reader");
    await app.signUp("another");
    await app.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token });
    return { app, token, user };
  }

  test("users page and GraphQL by POST and by GET: answers, refusals and the headers every answer carries", async () => {
    const { app, token } = await reader();
    const page = "/svc-api/v1/users/all?limit=1";
    const first = await app.call("GET", page, { token });
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(1);
    expect(first.headers.get("link")).toContain('rel="next"');
    const tag = first.headers.get("etag")!;
    expect((await app.call("GET", page, { token, headers: { "if-none-match": tag } })).status).toBe(304);
    const head = await app.call("HEAD", page, { token });
    expect({ status: head.status, text: head.text, etag: head.headers.get("etag") }).toEqual({
      status: 200,
      text: "",
      etag: tag,
    });
    expectProblem(await app.call("GET", "/svc-api/v1/users/all?limit=1&limit=0", { token }), 400, "validation_failed");
    expectProblem(await app.call("GET", "/svc-api/v1/users/all?sort=name", { token }), 400, "validation_failed");
    expectProblem(await app.call("GET", page, {}), 401, "unauthorized");
    expectProblem(await app.call("GET", page, { headers: { authorization: "Basic abc" } }), 401, "unauthorized");
    for (const [method, path, options] of [
      ["POST", "/graphql", { token, body: { query } }],
      ["POST", "/graphql", { token, body: { query } }],
      ["GET", `/graphql?query=${encodeURIComponent(query)}`, { token }],
      ["GET", `/graphql?query=${encodeURIComponent(query)}`, { token }],
    ] as [string, string, CallOptions][]) {
      const reply = await app.call(method, path, options);
      expect({
        method,
        status: reply.status,
        names: reply.body.data.categories.map((c: { name: string }) => c.name),
      }).toEqual({
        method,
        status: 200,
        names: ["Books"],
      });
      expect(stamp(reply.headers)).toMatchObject({ cacheControl: "no-store", nosniff: "nosniff" });
      expect(reply.headers.get("x-request-id")).toBeTruthy();
    }
    const refused = await app.call("POST", "/graphql", { body: { query } });
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    const broken = await app.call("POST", "/graphql", {
      token,
      raw: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(broken.status).toBeGreaterThanOrEqual(400);
    expect(broken.status).toBeLessThan(500);
  });

  test("are logged with their caller, counted, and count as the app's requests (what tells svc is busy)", async () => {
    const { app, token, user } = await reader();
    const before = app.app.requestsBegun();
    await app.call("GET", "/svc-api/v1/users/all?limit=1", { token, headers: { "x-request-id": "read-page" } });
    await app.call("POST", "/graphql", { token, body: { query }, headers: { "x-request-id": "read-graphql" } });
    // Probes are not what makes svc busy.
    await app.call("GET", "/svc/health/live");
    expect(app.app.requestsBegun()).toBe(before + 2);
    const lines = (await app.logs()).map((l) => JSON.parse(l)).filter((l) => l.msg === "request completed");
    expect(lines.find((l) => l.client_request_id === "read-page")).toMatchObject({
      route: "/svc-api/v1/users/all",
      status: 200,
      user_id: user.id,
    });
    expect(lines.find((l) => l.client_request_id === "read-graphql")).toMatchObject({
      route: "/graphql",
      status: 200,
      user_id: user.id,
    });
    const metrics = (await app.call("GET", "/svc/metrics")).text;
    expect(metrics).toMatch(
      /svc_http_requests_total\{[^}]*route="\/svc-api\/v1\/users\/all"[^}]*status="200"[^}]*\} 1/,
    );
  });

  test("a failure inside one is a logged 500 problem with the request id", async () => {
    const broken = await testApp({
      store: (store) => ({
        ...store,
        users: {
          ...store.users,
          list: async () => {
            throw new Error("disk on fire");
          },
        },
      }),
    });
    const { token: own } = await broken.signUp("victim");
    const reply = await broken.call("GET", "/svc-api/v1/users/all", {
      token: own,
      headers: { "x-request-id": "page-500" },
    });
    expectProblem(reply, 500, "internal");
    expect(reply.headers.get("x-request-id")).toBe("page-500");
    expect(reply.text).not.toContain("disk on fire");
    const failed = (await broken.logs()).map((l) => JSON.parse(l)).find((l) => l.msg === "request failed");
    expect(failed).toMatchObject({ client_request_id: "page-500", request_id: expect.any(String) });
  });

  test("over a socket: a GraphQL WebSocket handshake on GET /graphql still upgrades; PUT is 405 with Allow", async () => {
    const svc = await testApp();
    const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
    try {
      const { token } = await svc.signUp("socketeer");
      const socket = new WebSocket(`ws://127.0.0.1:${server.port}/graphql`, "graphql-transport-ws");
      const acked = new Promise<string>((resolve, reject) => {
        socket.onopen = () =>
          socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${token}` } }));
        socket.onmessage = (event) => resolve(JSON.parse(String(event.data)).type);
        socket.onerror = () => reject(new Error("socket failed"));
      });
      expect(await acked).toBe("connection_ack");
      socket.close();
      const put = await fetch(`http://127.0.0.1:${server.port}/graphql`, { method: "PUT" });
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")).toBe("GET, POST");
      const page = await fetch(`http://127.0.0.1:${server.port}/svc-api/v1/users/all`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(page.status).toBe(200);
      expect(page.headers.get("x-request-id")).toBeTruthy();
      expect((await page.json()).length).toBe(1);
    } finally {
      server.stop(true);
    }
  });
});

test("a CORS preflight, answered by the CORS plugin before any route, is logged, counted and stamped", async () => {
  const { call, logs } = await testApp({ config: { corsOrigins: ["https://app.example"] } });
  const headers = {
    origin: "https://app.example",
    "access-control-request-method": "GET",
    "x-request-id": "preflight",
  };
  const reply = await call("OPTIONS", "/svc-api/v1/users/me", { headers });
  expect({ status: reply.status, ...stamp(reply.headers), contentType: null }).toEqual({
    status: 204,
    contentType: null,
    cacheControl: "no-store",
    nosniff: "nosniff",
    requestId: "preflight",
  });
  const line = (await logs())
    .map((l) => JSON.parse(l))
    .find((l) => l.client_request_id === "preflight" && l.msg === "request completed");
  expect(line).toMatchObject({ method: "OPTIONS", route: "unmatched", status: 204 });
  const metrics = (await call("GET", "/svc/metrics")).text;
  expect(metrics).toMatch(/svc_http_requests_total\{method="OPTIONS",route="unmatched",status="204"[^}]*\} 1/);
});

describe("SVC_LOG_PROBES=false", () => {
  test.each([
    ["CORS closed", []],
    ["CORS open", ["https://app.example"]],
  ])(
    "probes answered 200 write no access line, %s; failed ones and other routes still do; all are counted",
    async (_way, corsOrigins) => {
      const up = { now: false };
      const { call, logs } = await testApp({
        config: { logProbes: false, corsOrigins },
        store: (store) => ({
          ...store,
          ping: async () => {
            if (!up.now) throw new Error("database is gone");
          },
        }),
      });
      expect((await call("GET", "/svc/health/ready", { headers: { "x-request-id": "loud-503" } })).status).toBe(503);
      // A failed check is never reused, so the next probe asks the database again.
      up.now = true;
      expect((await call("GET", "/svc/health", { headers: { "x-request-id": "quiet-ok" } })).status).toBe(200);
      expect((await call("GET", "/svc/health/live", { headers: { "x-request-id": "quiet-live" } })).status).toBe(200);
      await call("GET", "/no/such/path", { headers: { "x-request-id": "loud-404" } });
      const completed = (await logs())
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === "request completed")
        .map((l) => l.client_request_id);
      expect(completed).toEqual(["loud-503", "loud-404"]);
      const metrics = (await call("GET", "/svc/metrics")).text;
      expect(metrics).toMatch(/svc_http_requests_total\{[^}]*route="\/svc\/health"[^}]*status="200"[^}]*\} 1/);
      expect(metrics).toMatch(/svc_http_requests_total\{[^}]*route="\/svc\/health\/ready"[^}]*status="503"[^}]*\} 1/);
    },
  );
});

describe("over a socket", () => {
  let server: Server<unknown>;
  let base: string;
  let logs: () => Promise<string[]>;
  const ready = (async () => {
    const svc = await testApp();
    server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
    base = `http://127.0.0.1:${server.port}`;
    logs = svc.logs;
  })();
  afterAll(() => server?.stop(true));

  test("HEAD on a probe is its GET without the body", async () => {
    await ready;
    const response = await fetch(`${base}/svc/health`, { method: "HEAD", headers: { "x-request-id": "head-1" } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    expect(stamp(response.headers)).toMatchObject({ cacheControl: "no-store", requestId: "head-1" });
  });

  test("another method on a probe is 405 with Allow, still with a request id", async () => {
    await ready;
    const response = await fetch(`${base}/svc/health`, { method: "POST", headers: { "x-request-id": "post-1" } });
    const text = await response.text();
    expectProblem(
      { status: response.status, headers: response.headers, text, body: JSON.parse(text) },
      405,
      "method_not_allowed",
    );
    expect(response.headers.get("allow")).toBe("GET");
    expect(response.headers.get("x-request-id")).toBe("post-1");
    const line = (await logs())
      .map((l) => JSON.parse(l))
      .find((l) => l.client_request_id === "post-1" && l.msg === "request completed");
    // No route answers POST here, so the label is not the probe's.
    expect(line).toMatchObject({ route: "unmatched", status: 405 });
  });

  test("a probe with a query string is still the probe; an oversized body elsewhere is 413 before any reading", async () => {
    await ready;
    expect((await fetch(`${base}/svc/health/live?x=1`)).status).toBe(200);
    const response = await fetch(`${base}/svc-api/v1/users/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(2 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });
});

test("a failure even outside the app is answered as problem+json, never Bun's HTML error page", async () => {
  const lines: string[] = [];
  const loggers = createLoggers("info", { write: (line: string) => void lines.push(line) });
  // What the adapter hands requests to fails outside Elysia's own error handling.
  const outer = outerHandler({
    app: () => {
      throw new Error("the app broke");
    },
    logger: loggers.logger,
    maxBodyBytes: 1024,
  });
  const server = outer.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
  try {
    for (const path of ["/probe", "/elsewhere"]) {
      const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
      expect(response.status).toBe(500);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect((await response.json()).code).toBe("internal");
    }
    expect(lines.filter((l) => l.includes("request failed outside the app")).length).toBe(2);
  } finally {
    server.stop(true);
  }
});

describe("a path's methods, from the app's public list of routes", () => {
  const app = new Elysia({ normalize: false })
    .get("/files/*", () => "")
    .get("/files/:name", () => "")
    .get("/users/:id", () => "")
    .get("/users/all", () => "")
    .put("/users/:id", () => "")
    .delete("/users/all", () => "")
    .options("/*", () => "");
  const index = allowedMethods(app.routes);

  test("a path answers the methods of the fixed paths, parameters and wildcards it matches, a trailing slash aside", () => {
    expect(index.methodsFor("/users/all")).toEqual(["DELETE", "GET", "PUT"]);
    expect(index.methodsFor("/users/all/")).toEqual(["DELETE", "GET", "PUT"]);
    expect(index.methodsFor("/users/42")).toEqual(["GET", "PUT"]);
    expect(index.methodsFor("/users/42/")).toEqual(["GET", "PUT"]);
    expect(index.methodsFor("/files/a")).toEqual(["GET"]);
    expect(index.methodsFor("/files/a/b")).toEqual(["GET"]);
  });

  test("none for no path at all; OPTIONS and ALL count for no path", () => {
    expect(index.methodsFor("/users/42/sessions")).toEqual([]);
    expect(index.methodsFor("/elsewhere")).toEqual([]);
    expect(index.methods).toEqual(["DELETE", "GET", "PUT"]);
  });
});

test("svc's own routes are logged under their templates: a fixed path before a parameter", async () => {
  const { call, signUp, logs } = await testApp();
  const { token, user } = await signUp("labelled");
  const asked: [string, string, string][] = [
    ["me", "/svc-api/v1/users/me", "/svc-api/v1/users/me"],
    ["one", `/svc-api/v1/users/${user.id}`, "/svc-api/v1/users/:user_id"],
    ["slash", "/svc-api/v1/users/all/", "/svc-api/v1/users/all"],
    ["none", "/svc-api/v1/nothing/here", "unmatched"],
  ];
  for (const [id, path] of asked) await call("GET", path, { token, headers: { "x-request-id": id } });
  const lines = (await logs()).map((l) => JSON.parse(l)).filter((l) => l.msg === "request completed");
  for (const [id, , route] of asked)
    expect({ id, route: lines.find((l) => l.client_request_id === id)?.route }).toEqual({ id, route });
});

describe("routing ignores the Host header", () => {
  /** One raw HTTP/1.x exchange, so the Host header (or its absence) is exactly what is sent. */
  async function raw(port: number, head: string, body = ""): Promise<{ status: number; text: string }> {
    const { promise, resolve, reject } = Promise.withResolvers<string>();
    let received = "";
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data(_, chunk) {
          received += chunk.toString();
        },
        close: () => resolve(received),
        error: (_, error) => reject(error),
      },
    });
    socket.write(`${head}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const text = await promise;
    return { status: Number(text.split(" ")[1]), text };
  }

  const signUp = (n: number) =>
    JSON.stringify({ username: `host${n}`, email: `host${n}@example.com`, password: "correct horse battery" });

  test.each(["api", "db", "svc", "a:80", "x"])("Host: %s reaches every route, as any other host does", async (host) => {
    const svc = await testApp();
    const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
    try {
      const created = await raw(
        server.port!,
        `POST /svc-api/v1/users/create HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json`,
        signUp(1),
      );
      expect(created.status).toBe(201);
      const login = await raw(
        server.port!,
        `POST /svc-api/v1/auth/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json`,
        JSON.stringify({ username: "host1", password: "correct horse battery" }),
      );
      expect(login.status).toBe(200);
      expect((await raw(server.port!, `GET /graphql/playground HTTP/1.1\r\nHost: ${host}`)).status).toBe(200);
      expect((await raw(server.port!, `GET /svc-api/v1/nothing HTTP/1.1\r\nHost: ${host}`)).text).toContain(
        "Nothing lives at /svc-api/v1/nothing",
      );
    } finally {
      server.stop(true);
    }
  });

  test("an HTTP/1.0 request without Host reaches its route", async () => {
    const svc = await testApp();
    const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
    try {
      const created = await raw(
        server.port!,
        "POST /svc-api/v1/users/create HTTP/1.0\r\nContent-Type: application/json",
        signUp(2),
      );
      expect(created.status).toBe(201);
    } finally {
      server.stop(true);
    }
  });

  test("in process too: a short host in the URL changes nothing", async () => {
    const { app } = await testApp();
    const response = await app.handle(
      new Request("http://api/svc-api/v1/users/create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: signUp(3),
      }),
    );
    expect(response.status).toBe(201);
    expect(response.headers.get("location")).toStartWith("/svc-api/v1/users/");
  });
});

describe("known limitation: HTTP/1.1 pipelining (README and docs/operations.md)", () => {
  test("two pipelined requests behind an async route get no answer; this fails once Bun answers them, so the notes go", async () => {
    const svc = await testApp();
    await svc.signUp("ann");
    const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
    try {
      const { promise, resolve } = Promise.withResolvers<string>();
      let received = "";
      const body = JSON.stringify({ username: "ann", password: "wrong password" });
      const request = `POST /svc-api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const socket = await Bun.connect({
        hostname: "127.0.0.1",
        port: server.port!,
        socket: { data: (_, chunk) => void (received += chunk.toString()), close: () => resolve(received) },
      });
      socket.write(request + request);
      const answer = await Promise.race([promise, Bun.sleep(3000).then(() => `still open after 3 s: ${received}`)]);
      expect(answer).toBe("");
      for (const page of ["README.md", "docs/operations.md"])
        expect(await Bun.file(`${import.meta.dir}/../../${page}`).text()).toContain("**HTTP/1.1 pipelining.**");
    } finally {
      server.stop(true);
    }
  });
});
