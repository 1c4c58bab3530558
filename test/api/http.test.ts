import { describe, expect, test } from "bun:test";
import type { VersionedStore } from "../../src/db/store.ts";
import { expectProblem, testApp } from "../helpers.ts";

const CREATE = "/svc-api/v1/users/create";
const valid = { username: "ann", email: "ann@example.com", password: "correct horse" };

describe("unknown paths and methods", () => {
  test.each([
    ["POST", "/users/create"],
    ["POST", "/v1/users/create"],
    ["POST", "/auth/login"],
    ["GET", "/v1/users/all"],
    ["GET", "/users/all"],
    ["PUT", "/users/"],
    ["PUT", "/users/password"],
    ["DELETE", "/users/"],
    ["GET", "/svc-api/v2/users/all"],
    ["GET", "/svc-api/users/all"],
    ["GET", "/nothing/here"],
  ])("%s %s without the /svc-api/v1 prefix is 404 not_found", async (method, path) => {
    const { call } = await testApp();
    expectProblem(await call(method, path), 404, "not_found");
  });

  test.each([
    ["PUT", CREATE, "GET, POST"],
    ["DELETE", "/svc-api/v1/auth/login", "POST"],
    ["POST", "/svc-api/v1/users/all", "GET"],
    ["PATCH", "/svc-api/v1/users/", "DELETE, PUT"],
    ["POST", "/svc-api/v1/users/password", "GET, PUT"],
    ["DELETE", "/svc/health", "GET"],
    ["PUT", "/graphql", "GET, POST"],
  ])("%s %s is 405 method_not_allowed with Allow: %s", async (method, path, allow) => {
    const { call } = await testApp();
    const reply = await call(method, path);
    expectProblem(reply, 405, "method_not_allowed");
    expect(reply.headers.get("allow")).toBe(allow);
  });
});

describe("request bodies", () => {
  test("415 unsupported_media_type for a body that is not JSON", async () => {
    const { call, store } = await testApp();
    const form = await call("POST", CREATE, {
      raw: "username=ann",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectProblem(form, 415, "unsupported_media_type");
    expectProblem(
      await call("POST", CREATE, { raw: JSON.stringify(valid), headers: { "content-type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    expectProblem(await call("POST", CREATE, { raw: JSON.stringify(valid) }), 415, "unsupported_media_type");
    expect(await store.users.findByLogin("ann")).toBeNull();
  });

  test("accepts application/json with a charset", async () => {
    const { call } = await testApp();
    const reply = await call("POST", CREATE, {
      raw: JSON.stringify(valid),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(reply.status).toBe(201);
  });

  test.each([["{"], ['{"username": "ann",}'], [""], ["undefined"]])("400 malformed_json for %p", async (raw) => {
    const { call } = await testApp();
    expectProblem(
      await call("POST", CREATE, { raw, headers: { "content-type": "application/json" } }),
      400,
      "malformed_json",
    );
  });

  test.each([["[]"], ['"ann"'], ["42"], ["null"]])(
    "400 validation_failed for a JSON %s that is not an object",
    async (raw) => {
      const { call } = await testApp();
      const reply = await call("POST", CREATE, { raw, headers: { "content-type": "application/json" } });
      expectProblem(reply, 400, "validation_failed");
    },
  );

  test("400 validation_failed naming every unknown field, and nothing is created", async () => {
    const { call, store } = await testApp();
    const reply = await call("POST", CREATE, { body: { ...valid, admin: true, role: "root" } });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.detail).toBe("Unknown field(s): admin, role.");
    expect(reply.body.errors).toEqual([
      { field: "admin", message: "is not a known field" },
      { field: "role", message: "is not a known field" },
    ]);
    expect(await store.users.findByLogin("ann")).toBeNull();
  });

  test("413 payload_too_large past the body limit, by Content-Length or by the bytes themselves", async () => {
    const { call, store } = await testApp({ config: { maxBodyBytes: 2048 } });
    const big = JSON.stringify({ ...valid, username: "x".repeat(4096) });
    const declared = await call("POST", CREATE, {
      raw: big,
      headers: { "content-type": "application/json", "content-length": String(big.length) },
    });
    expectProblem(declared, 413, "payload_too_large");
    const streamed = await call("POST", CREATE, { raw: big, headers: { "content-type": "application/json" } });
    expectProblem(streamed, 413, "payload_too_large");
    expectProblem(
      await call("POST", "/graphql", {
        raw: big,
        headers: { "content-type": "application/json", "content-length": String(big.length) },
      }),
      413,
      "payload_too_large",
    );
    expect(await store.users.findByLogin("ann")).toBeNull();
  });

  test("413 for a streamed body with no Content-Length, stopping at the limit", async () => {
    const { app, store } = await testApp({ config: { maxBodyBytes: 2048 } });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode(" ".repeat(1024)));
        if (pulled === 100) controller.close();
      },
    });
    const response = await app.handle(
      new Request("http://localhost/svc-api/v1/users/create", {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      }),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe("payload_too_large");
    expect(pulled).toBeLessThan(100);
    expect(await store.users.findByLogin("ann")).toBeNull();
  });
});

describe("every response", () => {
  test("echoes a sane X-Request-Id and makes one otherwise", async () => {
    const { call } = await testApp();
    expect(
      (await call("GET", "/svc/health", { headers: { "x-request-id": "abc-123" } })).headers.get("x-request-id"),
    ).toBe("abc-123");
    const made = (await call("GET", "/nothing")).headers.get("x-request-id");
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = (await call("GET", "/svc/health", { headers: { "x-request-id": "a b <script>" } })).headers.get(
      "x-request-id",
    );
    expect(hostile).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("carries X-Content-Type-Options: nosniff and Cache-Control: no-store, REST and GraphQL, success and error", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    const replies = [
      await call("GET", "/svc/health"),
      await call("GET", "/nothing"),
      await call("GET", "/svc-api/v1/users/all", { token }),
      await call("POST", "/graphql", { body: { query: "{ categories { id } }" }, token }),
      await call("POST", "/graphql", { body: { query: "{ categories { id } }" } }),
    ];
    for (const reply of replies) {
      expect(reply.headers.get("x-content-type-options")).toBe("nosniff");
      expect(reply.headers.get("cache-control")).toBe("no-store");
      expect(reply.headers.get("x-request-id")).toBeTruthy();
    }
  });
});

describe("unexpected failures", () => {
  const failingLogin = (store: VersionedStore): VersionedStore => ({
    ...store,
    users: { ...store.users, findByLogin: () => Promise.reject(new Error("disk on fire: /var/secret/path")) },
  });

  test("are a masked 500 internal, logged with the request id", async () => {
    const { call, logs } = await testApp({ store: failingLogin });
    const reply = await call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: "whatever1" },
      headers: { "x-request-id": "req-42" },
    });
    expectProblem(reply, 500, "internal");
    expect(reply.text).not.toContain("disk on fire");
    const lines = (await logs()).map((l) => JSON.parse(l));
    const failure = lines.find((l) => l.msg === "request failed");
    expect(failure).toBeDefined();
    expect(failure.client_request_id).toBe("req-42");
    expect(failure.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(failure.err.message).toContain("disk on fire");
  });
});

describe("logs", () => {
  test("write one line per request with id, method, path, status, duration and user, and never a password or token", async () => {
    const { call, signUp, logs } = await testApp();
    const { token, password, user } = await signUp("ann");
    await call("GET", "/svc-api/v1/users/all", { token, headers: { "x-request-id": "list-1" } });
    await call("GET", "/nothing", { headers: { "x-request-id": "missing-1" } });
    const text = (await logs()).join("\n");
    expect(text).not.toContain(password);
    expect(text).not.toContain(token);
    const completed = text
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "request completed");
    const list = completed.find((l) => l.client_request_id === "list-1");
    expect(list).toMatchObject({ method: "GET", path: "/svc-api/v1/users/all", status: 200, user_id: user.id });
    expect(typeof list.duration_ms).toBe("number");
    expect(completed.find((l) => l.client_request_id === "missing-1")).toMatchObject({ status: 404 });
  });
});

describe("order of checks on a protected route", () => {
  test("body syntax first, then the token, then the fields", async () => {
    const { call } = await testApp();
    expectProblem(
      await call("PUT", "/svc-api/v1/users/", { raw: "{", headers: { "content-type": "application/json" } }),
      400,
      "malformed_json",
    );
    expectProblem(
      await call("PUT", "/svc-api/v1/users/", { raw: "{}", headers: { "content-type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    expectProblem(await call("PUT", "/svc-api/v1/users/", { body: { role: "admin" } }), 401, "unauthorized");
  });
});
