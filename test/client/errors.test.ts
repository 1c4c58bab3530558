// Every failure the client reports is an SvcError whose code is one of svc's documented codes (or the
// client's network_error / unexpected_response), with status, title, detail, fields and retryAfter read
// from the answer: for every code the OpenAPI document lists, and for real refusals of REST and GraphQL.
import { describe, expect, test } from "bun:test";
import { createClient, type ServerErrorCode, SvcError } from "../../client/src/index.ts";
import type { ErrorCode as ServiceErrorCode } from "../../src/errors/index.ts";
import { testApp } from "../helpers.ts";
import { failureOf } from "../support/failure.ts";

const PASSWORD = "correct horse battery";

// The client's code union is the service's catalogue, both ways (a compile-time check).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameCodes: Same<ServerErrorCode, ServiceErrorCode> = true;

const failure = (promise: Promise<unknown>) => failureOf(promise, SvcError);

describe("every documented code", () => {
  test("each problem the document lists reaches SvcError with its status, title, detail and Retry-After", async () => {
    const { call } = await testApp();
    const document = (await call("GET", "/svc-api/openapi.json")).body;
    const codes: string[] = document.components.schemas.Problem.properties.code.enum;
    expect(sameCodes).toBe(true);
    expect(codes.length).toBeGreaterThan(25);
    for (const [index, code] of codes.entries()) {
      const status = 400 + index;
      const client = createClient({
        baseUrl: "http://svc.test",
        fetch: (async () =>
          Response.json(
            { type: "about:blank", title: `Title ${code}`, status, detail: `Detail ${code}`, code },
            {
              status,
              headers: { "content-type": "application/problem+json", "retry-after": "7", "x-request-id": "r1" },
            },
          )) as unknown as typeof fetch,
      });
      const error = await failure(client.users.create({ username: "ann", email: "a@example.com", password: PASSWORD }));
      expect({ ...error, message: error.message }).toMatchObject({
        status,
        code,
        title: `Title ${code}`,
        detail: `Detail ${code}`,
        message: `Detail ${code}`,
        retryAfter: 7,
        requestId: "r1",
        fields: [],
      });
    }
  });

  test("no answer is network_error (status 0); an answer that is not svc's is unexpected_response", async () => {
    const offline = createClient({
      baseUrl: "http://svc.test",
      fetch: (async () => {
        throw new TypeError("fetch failed");
      }) as unknown as typeof fetch,
    });
    expect(await failure(offline.users.get("x"))).toMatchObject({ status: 0, code: "network_error" });
    const proxy = createClient({
      baseUrl: "http://svc.test",
      fetch: (async () =>
        new Response("<h1>Bad gateway</h1>", {
          status: 502,
          headers: { "content-type": "text/html" },
        })) as unknown as typeof fetch,
    });
    expect(
      await failure(proxy.users.create({ username: "ann", email: "a@example.com", password: PASSWORD })),
    ).toMatchObject({
      status: 502,
      code: "unexpected_response",
    });
    expect(await failure(proxy.categories.list())).toMatchObject({ status: 502, code: "unexpected_response" });
  });
});

describe("real refusals", () => {
  async function signedIn() {
    const { app } = await testApp();
    const client = createClient({
      baseUrl: "http://localhost",
      fetch: ((input: RequestInfo | URL, init?: RequestInit) => app.handle(new Request(input, init))) as typeof fetch,
    });
    await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
    return client;
  }

  test("REST: validation names its fields; a taken name, bad credentials, an unknown user", async () => {
    const client = await signedIn();
    const invalid = await failure(client.users.create({ username: "a", email: "nope", password: PASSWORD }));
    expect(invalid).toMatchObject({ status: 400, code: "validation_failed" });
    expect(invalid.fields.map((field) => field.field).sort()).toEqual(["email", "username"]);
    expect(
      await failure(client.users.create({ username: "ANN", email: "other@example.com", password: PASSWORD })),
    ).toMatchObject({ status: 409, code: "username_taken" });
    expect(await failure(client.auth.login({ username: "ann", password: "wrong password" }))).toMatchObject({
      status: 401,
      code: "invalid_credentials",
    });
    expect(await failure(client.users.me())).toMatchObject({ status: 401, code: "unauthorized" });
    await client.auth.login({ username: "ann", password: PASSWORD });
    expect(await failure(client.users.get(crypto.randomUUID()))).toMatchObject({ status: 404, code: "not_found" });
    expect(
      await failure(
        client.users.changePassword({ current_password: "wrong password", new_password: "a new password" }),
      ),
    ).toMatchObject({ status: 403, code: "current_password_mismatch" });
  });

  test("GraphQL: svc's code from extensions.reason, and the version a conflict found", async () => {
    const client = await signedIn();
    await client.auth.login({ username: "ann", password: PASSWORD });
    const books = await client.categories.create({ name: "Books" });
    expect(await failure(client.categories.create({ name: "books" }))).toMatchObject({
      code: "category_name_taken",
      graphqlCode: "CONFLICT",
    });
    await client.categories.update(books.id, { description: "Read" }, { ifVersion: 1 });
    const stale = await failure(client.categories.update(books.id, { description: "Again" }, { ifVersion: 1 }));
    expect(stale).toMatchObject({ code: "version_mismatch", graphqlCode: "CONFLICT", currentVersion: 2 });
    const invalid = await failure(client.categories.create({ name: "x", colorHex: "red" }));
    expect(invalid).toMatchObject({ code: "validation_failed", graphqlCode: "BAD_USER_INPUT" });
    expect(invalid.fields[0]?.field).toBe("colorHex");
    expect(await failure(client.graphql("{ nope }"))).toMatchObject({ code: "validation_failed" });
    await client.auth.logout();
    expect(await failure(client.categories.create({ name: "Films" }))).toMatchObject({
      status: 401,
      code: "unauthorized",
      graphqlCode: "UNAUTHENTICATED",
    });
  });
});
