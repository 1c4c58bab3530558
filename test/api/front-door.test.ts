// The front door: what every request gets on its way in and out, whether Elysia answers it or it is
// one of the health probes answered directly (on Bun's own router when served).
import { afterAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { frontDoor } from "../../src/http/front-door.ts";
import { Elysia } from "elysia";
import { routeIndex } from "../../src/http/route-index.ts";
import { createLoggers } from "../../src/log.ts";
import type { Metrics } from "../../src/metrics.ts";
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

describe("health probes answered directly", () => {
  test.each(PROBES)(
    "%s answers as its Elysia twin does (the way in when CORS is on), headers included",
    async (path) => {
      const direct = await testApp();
      const twin = await testApp({ config: { corsOrigins: ["https://app.example"] } });
      const headers = { "x-request-id": "probe-1", origin: "https://app.example" };
      const a = await direct.call("GET", path, { headers });
      const b = await twin.call("GET", path, { headers });
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
      // CORS stays Elysia's: only the twin carries it, and only there is it configured.
      expect(b.headers.get("access-control-allow-origin")).toBe("https://app.example");
    },
  );

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

describe("hot reads answered without Elysia", () => {
  const query = "{ categories { id name description colorHex icon } }";
  // The same requests to an app answering them itself and to one sending them through their Elysia
  // twins (CORS open), on one database: status, body and the headers a client reads must not differ.
  async function twins() {
    const hot = await testApp();
    const twin = await testApp({ config: { corsOrigins: ["https://app.example"] }, on: hot.store });
    const { token, user } = await hot.signUp("hotreader");
    await hot.signUp("another");
    await hot.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token });
    return { hot, twin, token, user };
  }
  const HEADERS = [
    "content-type",
    "etag",
    "link",
    "www-authenticate",
    "cache-control",
    "x-content-type-options",
    "allow",
  ];
  const seen = (reply: Reply) => ({
    status: reply.status,
    text: reply.text,
    headers: Object.fromEntries(HEADERS.map((name) => [name, reply.headers.get(name)])),
  });

  test("users page, GraphQL by POST and by GET: the same answers, refusals included", async () => {
    const { hot, twin, token } = await twins();
    const page = "/svc-api/v1/users/all?limit=1";
    const tag = (await hot.call("GET", page, { token })).headers.get("etag")!;
    const requests: [string, string, CallOptions][] = [
      ["GET", page, { token }],
      ["GET", page, { token, headers: { "if-none-match": tag } }],
      ["HEAD", page, { token }],
      ["GET", "/svc-api/v1/users/all?limit=1&limit=0", { token }],
      ["GET", "/svc-api/v1/users/all?limit=%32", { token }],
      ["GET", "/svc-api/v1/users/all?sort=name", { token }],
      ["GET", page, {}],
      ["GET", page, { headers: { authorization: "Basic abc" } }],
      ["GET", page, { token: `${token}x` }],
      ["POST", "/graphql", { token, body: { query } }],
      ["POST", "/graphql", { token, body: { query } }],
      ["POST", "/graphql", { body: { query } }],
      ["POST", "/graphql", { token, raw: "{not json", headers: { "content-type": "application/json" } }],
      ["GET", `/graphql?query=${encodeURIComponent(query)}`, { token }],
      ["HEAD", `/graphql?query=${encodeURIComponent(query)}`, { token }],
    ];
    for (const [method, path, options] of requests) {
      const a = seen(await hot.call(method, path, options));
      const b = seen(await twin.call(method, path, options));
      expect({ method, path, ...a }).toEqual({ method, path, ...b });
    }
    // The refusals, by their codes: the twins agreeing is not enough if both were wrong.
    expectProblem(await hot.call("GET", "/svc-api/v1/users/all?limit=1&limit=0", { token }), 400, "validation_failed");
    expectProblem(await hot.call("GET", "/svc-api/v1/users/all?sort=name", { token }), 400, "validation_failed");
    expectProblem(await hot.call("GET", page, {}), 401, "unauthorized");
    expect((await hot.call("GET", page, { token, headers: { "if-none-match": tag } })).status).toBe(304);
  });

  test("are logged with their caller, counted, and count as the app's requests (what tells svc is busy)", async () => {
    const { hot, token, user } = await twins();
    const before = hot.app.requestsBegun();
    await hot.call("GET", "/svc-api/v1/users/all?limit=1", { token, headers: { "x-request-id": "hot-page" } });
    await hot.call("POST", "/graphql", { token, body: { query }, headers: { "x-request-id": "hot-graphql" } });
    expect(hot.app.requestsBegun()).toBe(before + 2);
    const lines = (await hot.logs()).map((l) => JSON.parse(l)).filter((l) => l.msg === "request completed");
    expect(lines.find((l) => l.client_request_id === "hot-page")).toMatchObject({
      route: "/svc-api/v1/users/all",
      status: 200,
      user_id: user.id,
    });
    expect(lines.find((l) => l.client_request_id === "hot-graphql")).toMatchObject({
      route: "/graphql",
      status: 200,
      user_id: user.id,
    });
    const metrics = (await hot.call("GET", "/svc/metrics")).text;
    expect(metrics).toMatch(
      /svc_http_requests_total\{[^}]*route="\/svc-api\/v1\/users\/all"[^}]*status="200"[^}]*\} 1/,
    );
  });

  test("a failure inside one is a logged 500 problem with the request id, as through Elysia", async () => {
    const { token } = await twins();
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
    expect(token).toBeTruthy();
    const reply = await broken.call("GET", "/svc-api/v1/users/all", {
      token: own,
      headers: { "x-request-id": "hot-500" },
    });
    expectProblem(reply, 500, "internal");
    expect(reply.headers.get("x-request-id")).toBe("hot-500");
    expect(reply.text).not.toContain("disk on fire");
    const failed = (await broken.logs()).map((l) => JSON.parse(l)).find((l) => l.msg === "request failed");
    expect(failed).toMatchObject({ client_request_id: "hot-500", request_id: expect.any(String) });
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

describe("SVC_LOG_PROBES=false", () => {
  test.each([
    ["answered directly", []],
    ["through Elysia (CORS open)", ["https://app.example"]],
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

  test("another method on a probe goes to Elysia: 405 with Allow, still with a request id", async () => {
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
  const broken = {
    request: () => {
      throw new Error("metrics broke");
    },
  } as unknown as Metrics;
  const door = frontDoor({
    app: { router: new Elysia().router, fetch: () => new Response("inner") },
    direct: { "/probe": (_request, headers) => new Response("ok", { headers }) },
    quietWhenOk: [],
    loggers,
    metrics: broken,
    maxBodyBytes: 1024,
  });
  const server = door.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
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

describe("route templates, from Elysia's router", () => {
  const app = new Elysia({ normalize: false })
    .get("/files/*", () => "")
    .get("/files/:name", () => "")
    .get("/users/:id", () => "")
    .get("/users/all", () => "")
    .put("/users/:id", () => "")
    .options("/*", () => "");
  const index = routeIndex(app.router);

  test("a path without parameters wins over a parameter, and a parameter over a wildcard", () => {
    expect(index.template("GET", "/users/all")).toBe("/users/all");
    expect(index.template("GET", "/users/all/")).toBe("/users/all");
    expect(index.template("GET", "/users/42")).toBe("/users/:id");
    expect(index.template("GET", "/users/42/")).toBe("/users/:id");
    expect(index.template("GET", "/files/a")).toBe("/files/:name");
    expect(index.template("GET", "/files/a/b")).toBe("/files/*");
  });

  test("no template for a method the path does not answer, or for no path at all", () => {
    expect(index.template("DELETE", "/users/42")).toBeUndefined();
    expect(index.template("GET", "/elsewhere")).toBeUndefined();
    expect(index.template("OPTIONS", "/users/42")).toBeUndefined();
    expect(index.methodsFor("/users/42")).toEqual(["GET", "PUT"]);
    expect(index.methodsFor("/users/all")).toEqual(["GET", "PUT"]);
    expect(index.methodsFor("/elsewhere")).toEqual([]);
  });
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
