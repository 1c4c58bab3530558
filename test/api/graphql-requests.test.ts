// GraphQL requests in process: the playground and introspection, bad requests, and unexpected failures.
import { describe, expect, test } from "bun:test";
import { buildSchema, printSchema } from "graphql";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
import { LIST, errorOf, setup } from "../support/graphql.ts";

describe("playground and introspection", () => {
  test("GraphiQL is served at /graphql/playground when enabled, with no outside assets", async () => {
    const { call } = await setup({ config: { graphql: { playground: true } } });
    const reply = await call("GET", "/graphql/playground");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toStartWith("text/html");
    expect(reply.text).toContain("/graphql");
    expect(reply.text).not.toMatch(/<script[^>]+src=["']https?:/);
    expect(reply.text).not.toMatch(/<link[^>]+href=["']https?:/);
  });

  test("the playground page is gzipped when accepted, cacheable with an ETag, 304 when unchanged, and keeps no headers in localStorage", async () => {
    const { call } = await setup({ config: { graphql: { playground: true } } });
    const plain = await call("GET", "/graphql/playground");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(plain.text).toContain('"shouldPersistHeaders":false');
    expect(plain.text).toContain("Bearer <token>");
    const etag = plain.headers.get("etag")!;
    expect(etag).toMatch(/^"\d+\.\d+\.\d+-\w+"$/);
    const { app } = await setup({ config: { graphql: { playground: true } } });
    const gzipped = await app.handle(
      new Request("http://localhost/graphql/playground", { headers: { "accept-encoding": "gzip, br" } }),
    );
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    const bytes = new Uint8Array(await gzipped.arrayBuffer());
    expect(bytes.byteLength).toBeLessThan(plain.text.length / 3);
    expect(new TextDecoder().decode(Bun.gunzipSync(bytes))).toBe(plain.text);
    // "gzip;q=0" refuses gzip (RFC 9110); "*" takes it.
    for (const [accept, encoding] of [
      ["br, gzip;q=0", null],
      ["GZIP;Q=0.000", null],
      ["*", "gzip"],
      ["*;q=0", null],
      ["gzip;q=0.5, *;q=0", "gzip"],
    ] as const) {
      const reply = await app.handle(
        new Request("http://localhost/graphql/playground", { headers: { "accept-encoding": accept } }),
      );
      expect([accept, reply.headers.get("content-encoding")]).toEqual([accept, encoding]);
    }
    const again = await call("GET", "/graphql/playground", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });

  test("the playground is 404 when disabled", async () => {
    const { call } = await setup({ config: { graphql: { playground: false } } });
    expect((await call("GET", "/graphql/playground")).status).toBe(404);
  });

  test("GET /graphql/schema.graphql serves the SDL without a token while introspection is allowed; 404 when it is not", async () => {
    const on = await setup({ config: { graphql: { introspection: true } } });
    const sdl = await on.call("GET", "/graphql/schema.graphql");
    expect(sdl.status).toBe(200);
    expect(sdl.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    // The schema the server runs: it builds, and it has the list arguments.
    const schema = buildSchema(sdl.text);
    expect(
      schema
        .getQueryType()
        ?.getFields()
        .categories?.args.map((a) => a.name),
    ).toEqual(["first", "after"]);
    expect(printSchema(schema)).toBe(
      printSchema(buildSchema(await Bun.file(`${import.meta.dir}/../../schema/categories.graphql`).text())),
    );
    const off = await setup({ config: { graphql: { introspection: false } } });
    expect((await off.call("GET", "/graphql/schema.graphql")).status).toBe(404);
    expect((await off.call("GET", "/graphql/schema.graphql", { token: off.owner.token })).status).toBe(404);
  });

  test("while introspection is allowed, a query for the schema alone needs no token (GraphiQL loads it before one is pasted); anything more does", async () => {
    const { graphql, call } = await setup({ config: { graphql: { introspection: true } } });
    const schemaOnly = "query IntrospectionQuery { __schema { queryType { name } } }";
    for (const token of [undefined, "<token>"])
      expect((await graphql(schemaOnly, { token })).body).toEqual({
        data: { __schema: { queryType: { name: "Query" } } },
      });
    expect((await call("GET", `/graphql?query=${encodeURIComponent(schemaOnly)}`)).status).toBe(200);
    for (const more of [
      "{ __schema { queryType { name } } categories { id } }",
      "{ categories { __typename } }",
      "query A { __schema { queryType { name } } } query B { categories { id } }",
      "{ ...F } fragment F on Query { categories { id } }",
    ]) {
      expect((await graphql(more)).status).toBe(401);
    }
    const closed = await setup({ config: { graphql: { introspection: false } } });
    expect((await closed.graphql(schemaOnly)).status).toBe(401);
  });

  test("introspection works when enabled and is refused when disabled", async () => {
    const on = await setup({ config: { graphql: { introspection: true } } });
    expect((await on.graphql("{ __schema { queryType { name } } }", { token: on.owner.token })).body).toEqual({
      data: { __schema: { queryType: { name: "Query" } } },
    });
    const off = await setup({ config: { graphql: { introspection: false } } });
    const refused = await off.graphql("{ __schema { queryType { name } } }", { token: off.owner.token });
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors[0].message).toContain("introspection");
  });
});

describe("bad requests", () => {
  test.each([
    ["malformed JSON", "{"],
    ["an empty body", ""],
    ["a batch", "[]"],
    ["a non-string query", '{"query":1}'],
    ["a syntax error", '{"query":"{"}'],
    ["an unknown field", '{"query":"{ categories { nope } }"}'],
    ["variables that are not an object", '{"query":"{ categories { id } }","variables":"x"}'],
    ["a literal of the wrong type", '{"query":"mutation { createCategory(input: {name: 5}) { id } }"}'],
    [
      "a variable of the wrong type",
      '{"query":"query($i: ID!) { category(id: $i) { id } }","variables":{"i":{"a":1}}}',
    ],
    [
      "an unknown input field",
      '{"query":"mutation($i: CreateCategoryInput!) { createCategory(input: $i) { id } }","variables":{"i":{"name":"x","bogus":1}}}',
    ],
    ["a missing variable", '{"query":"query($i: ID!) { category(id: $i) { id } }"}'],
  ])("%s: a 4xx or GraphQL error with a code, no internals, nothing stored", async (_, raw) => {
    const { call, store } = await testApp({ config: { graphql: { auth: "off" } } });
    const reply = await call("POST", "/graphql", { raw, headers: { "content-type": "application/json" } });
    expect(reply.status).toBeLessThan(500);
    expect(reply.body.errors.length).toBeGreaterThan(0);
    for (const error of reply.body.errors) {
      expect(typeof error.extensions?.code).toBe("string");
      expect(error.extensions).not.toHaveProperty("originalError");
    }
    expect(await store.categories.list()).toEqual([]);
  });

  test.each([
    ["POST", "application/graphql-response+json", 400],
    ["POST", "application/json", 200],
    ["GET", "application/graphql-response+json", 400],
    ["GET", "application/json", 200],
  ])(
    "a syntax error by %s accepting %s: %d GRAPHQL_PARSE_FAILED with the parser's message and location, no error logged",
    async (method, accept, status) => {
      const { call, logs } = await testApp({ config: { graphql: { auth: "off" } } });
      const query = "{ categories { id ";
      const reply =
        method === "POST"
          ? await call("POST", "/graphql", { body: { query }, headers: { accept } })
          : await call("GET", `/graphql?query=${encodeURIComponent(query)}`, { headers: { accept } });
      expect(reply.status).toBe(status);
      expect(reply.body.errors).toEqual([
        {
          message: "Syntax Error: Expected Name, found <EOF>.",
          locations: [{ line: 1, column: 19 }],
          extensions: { code: "GRAPHQL_PARSE_FAILED" },
        },
      ]);
      expect((await logs()).filter((line) => ["warn", "error"].includes(JSON.parse(line).level))).toEqual([]);
    },
  );

  test("a variable of the wrong type is 400 every time, also once the operation's document is cached", async () => {
    const { call } = await testApp({ config: { graphql: { auth: "off" } } });
    for (const accept of ["application/json", "application/graphql-response+json"]) {
      const statuses: number[] = [];
      for (let round = 0; round < 4; round++) {
        const reply = await call("POST", "/graphql", {
          body: { query: "query Page($n: Int) { categories(first: $n) { id } }", variables: { n: "x" } },
          headers: { accept },
        });
        statuses.push(reply.status);
        expect(reply.body.data).toBeUndefined();
        expect(reply.body.errors[0].extensions).toEqual({ code: "BAD_USER_INPUT" });
        expect(reply.body.errors[0].message).toContain('Variable "$n" got invalid value "x"');
      }
      expect({ accept, statuses }).toEqual({ accept, statuses: [400, 400, 400, 400] });
    }
  });

  test("a mutation from an HTML form (urlencoded, multipart, text/plain) is 415 and changes nothing", async () => {
    // A page on any origin can send these without a preflight: with SVC_GRAPHQL_AUTH=off they would be
    // a visitor's browser writing categories (GraphQL over HTTP: POST takes application/json).
    const { app, call, graphql } = await testApp({ config: { graphql: { auth: "off" } } });
    const query = 'mutation { createCategory(input: { name: "Planted" }) { id } }';
    const multipart = new FormData();
    multipart.set("query", query);
    const bodies: Array<[string, BodyInit]> = [
      ["application/x-www-form-urlencoded", new URLSearchParams({ query }).toString()],
      ["text/plain", JSON.stringify({ query })],
      ["text/plain;charset=UTF-8", JSON.stringify({ query })],
    ];
    for (const [type, body] of bodies) {
      const reply = await call("POST", "/graphql", { raw: body as string, headers: { "content-type": type } });
      expect({ type, status: reply.status, code: reply.body.errors?.[0]?.extensions?.code }).toEqual({
        type,
        status: 415,
        code: "BAD_REQUEST",
      });
    }
    const form = await app.handle(new Request("http://localhost/graphql", { method: "POST", body: multipart }));
    expect(form.status).toBe(415);
    const noType = await app.handle(
      new Request("http://localhost/graphql", { method: "POST", body: new Blob([JSON.stringify({ query })]) }),
    );
    expect(noType.status).toBe(415);
    expect((await graphql("{ categories { name } }")).body.data.categories).toEqual([]);
  });

  test("a body that is not JSON is 415", async () => {
    const { call } = await testApp({ config: { graphql: { auth: "off" } } });
    const reply = await call("POST", "/graphql", {
      raw: '{"query":"{ categories { id } }"}',
      headers: { "content-type": "text/plain" },
    });
    expect(reply.status).toBe(415);
  });
});

describe("unexpected failures", () => {
  test("are masked with INTERNAL_SERVER_ERROR and logged with the request id", async () => {
    const failing = (store: VersionedStore): VersionedStore => ({
      ...store,
      categories: { ...store.categories, list: () => Promise.reject(new Error("secret table exploded")) },
    });
    const { call, owner, logs } = await setup({ store: failing });
    const reply = await call("POST", "/graphql", {
      body: { query: LIST },
      token: owner.token,
      headers: { "x-request-id": "gql-7" },
    });
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain("exploded");
    expect(errorOf(reply)).toMatchObject({
      message: "Unexpected error.",
      extensions: { code: "INTERNAL_SERVER_ERROR" },
    });
    const failure = (await logs()).map((l) => JSON.parse(l)).find((l) => l.msg === "graphql resolver failed");
    expect(failure).toMatchObject({ client_request_id: "gql-7", request_id: expect.any(String) });
    expect(failure.err.message).toContain("exploded");
  });
});
