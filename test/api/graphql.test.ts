import { describe, expect, test } from "bun:test";
import { buildSchema, printSchema } from "graphql";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";

const CREATE = `mutation Create($input: CreateCategoryInput!) {
  createCategory(input: $input) { id name description colorHex icon createdAt updatedAt }
}`;
const UPDATE = `mutation Update($id: ID!, $input: UpdateCategoryInput!) {
  updateCategory(id: $id, input: $input) { id name description colorHex icon }
}`;
const DELETE = "mutation Delete($id: ID!) { deleteCategory(id: $id) }";
const LIST = "{ categories { id name description colorHex icon } }";

async function setup(config: Parameters<typeof testApp>[0] = {}) {
  const app = await testApp(config);
  const owner = await app.signUp("owner");
  const create = async (input: Record<string, unknown>, token = owner.token) =>
    app.graphql(CREATE, { variables: { input }, token });
  return { ...app, owner, create };
}

function errorOf(reply: { body: { errors?: Array<{ extensions?: Record<string, unknown>; message: string }> } }) {
  expect(reply.body.errors).toHaveLength(1);
  return reply.body.errors![0]!;
}

describe("queries", () => {
  test("categories and listAllCategories give the same list, ordered by name without regard to case", async () => {
    const { create, graphql, owner } = await setup();
    for (const name of ["banana", "Apple", "cherry"]) await create({ name });
    const a = await graphql(LIST, { token: owner.token });
    const b = await graphql("{ listAllCategories { id name description colorHex icon } }", { token: owner.token });
    expect(a.status).toBe(200);
    expect(a.body.data.categories.map((c: { name: string }) => c.name)).toEqual(["Apple", "banana", "cherry"]);
    expect(b.body.data.listAllCategories).toEqual(a.body.data.categories);
  });

  test("category(id) returns the category, or null for an unknown or malformed id", async () => {
    const { create, graphql, owner } = await setup();
    const id = (await create({ name: "Books" })).body.data.createCategory.id;
    const q = "query One($id: ID!) { category(id: $id) { id name } }";
    expect((await graphql(q, { variables: { id }, token: owner.token })).body.data.category).toEqual({
      id,
      name: "Books",
    });
    expect(
      (await graphql(q, { variables: { id: "01937a6e-0000-7000-8000-000000000000" }, token: owner.token })).body,
    ).toEqual({ data: { category: null } });
    expect((await graphql(q, { variables: { id: "nope" }, token: owner.token })).body).toEqual({
      data: { category: null },
    });
  });

  test.each(["categories", "listAllCategories"])(
    "%s(first, after) pages through the list by name; without them, the whole list",
    async (field) => {
      const { create, graphql, owner } = await setup();
      for (const name of ["delta", "Alpha", "echo", "bravo", "Charlie"]) await create({ name });
      const page = async (args: string) => {
        const reply = await graphql(`{ ${field}${args} { id name } }`, { token: owner.token });
        expect(reply.body.errors).toBeUndefined();
        return reply.body.data[field] as Array<{ id: string; name: string }>;
      };
      const all = await page("");
      expect(all.map((c) => c.name)).toEqual(["Alpha", "bravo", "Charlie", "delta", "echo"]);
      const first = await page("(first: 2)");
      expect(first).toEqual(all.slice(0, 2));
      const second = await page(`(first: 2, after: "${first[1]!.id}")`);
      expect(second).toEqual(all.slice(2, 4));
      expect(await page(`(first: 2, after: "${second[1]!.id}")`)).toEqual(all.slice(4));
      expect(await page(`(first: 2, after: "${all[4]!.id}")`)).toEqual([]);
      expect(await page(`(after: "${all[0]!.id}")`)).toEqual(all.slice(1));
      expect(await page("(first: 1000)")).toEqual(all);
    },
  );

  test.each([
    ["first", "(first: 0)"],
    ["first", "(first: 1001)"],
    ["first", "(first: -1)"],
    ["after", '(after: "not-an-id")'],
    ["after", '(after: "01937a6e-0000-7000-8000-000000000000")'],
  ])("a bad %s %s: BAD_USER_INPUT naming it", async (field, args) => {
    const { graphql, owner } = await setup();
    const reply = await graphql(`{ categories${args} { id } }`, { token: owner.token });
    expect(reply.body.data ?? null).toBeNull();
    expect(reply.body.errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
  });

  test("GET /graphql answers queries too", async () => {
    const { call, owner } = await setup();
    const reply = await call("GET", `/graphql?query=${encodeURIComponent("{ categories { id } }")}`, {
      token: owner.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ data: { categories: [] } });
  });
});

describe("createCategory", () => {
  test("by an account deleted while the mutation ran: UNAUTHENTICATED, and nothing stored", async () => {
    let deleteFirst: string | undefined;
    const app = await testApp({
      store: (store: VersionedStore): VersionedStore => ({
        ...store,
        categories: {
          ...store.categories,
          async create(category) {
            if (deleteFirst) await store.users.delete(deleteFirst);
            return store.categories.create(category);
          },
        },
      }),
    });
    const { token, user } = await app.signUp("ann");
    deleteFirst = user.id;
    const reply = await app.graphql('mutation { createCategory(input: { name: "Orphan" }) { id } }', { token });
    expect(reply.body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(await app.store.counts()).toEqual({ users: 0, categories: 0 });
  });

  test("creates with a variable: trims the name, upper-cases the colour, returns every field", async () => {
    const { create } = await setup();
    const reply = await create({ name: "  Travel  ", description: "Trips", colorHex: "#a1b2c3", icon: "mdi:airplane" });
    expect(reply.status).toBe(200);
    const category = reply.body.data.createCategory;
    expect(category).toMatchObject({ name: "Travel", description: "Trips", colorHex: "#A1B2C3", icon: "mdi:airplane" });
    expect(category.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(category.createdAt).toBe(category.updatedAt);
  });

  test("creates with an inline object literal, defaulting the colour to #64748B", async () => {
    const { graphql, owner } = await setup();
    const reply = await graphql(
      'mutation { createCategory(input: { name: "Food" }) { id name colorHex description icon } }',
      { token: owner.token },
    );
    expect(reply.body.data.createCategory).toMatchObject({
      name: "Food",
      colorHex: "#64748B",
      description: null,
      icon: null,
    });
  });

  test.each([
    ["name", { name: "" }],
    ["name", { name: "    " }],
    ["name", { name: "n".repeat(65) }],
    ["colorHex", { name: "ok", colorHex: "red" }],
    ["colorHex", { name: "ok", colorHex: "#12345" }],
    ["colorHex", { name: "ok", colorHex: "#1234567" }],
    ["icon", { name: "ok", icon: "has space" }],
    ["icon", { name: "ok", icon: "" }],
    ["icon", { name: "ok", icon: "i".repeat(65) }],
    ["description", { name: "ok", description: "d".repeat(501) }],
  ])("rejects an invalid %s with BAD_USER_INPUT naming the field, and stores nothing", async (field, input) => {
    const { create, graphql, owner } = await setup();
    const error = errorOf(await create(input));
    expect(error.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
    expect((await graphql(LIST, { token: owner.token })).body.data.categories).toEqual([]);
  });

  test("accepts the limits exactly: 64-character name, 500-character description", async () => {
    const { create } = await setup();
    const reply = await create({ name: "n".repeat(64), description: "d".repeat(500) });
    expect(reply.body.errors).toBeUndefined();
  });

  test("rejects a name taken without regard to case with CONFLICT, reason category_name_taken", async () => {
    const { create } = await setup();
    await create({ name: "Books" });
    expect(errorOf(await create({ name: " BOOKS " })).extensions).toEqual({
      code: "CONFLICT",
      reason: "category_name_taken",
    });
  });

  test("simultaneous creates of one name: exactly one succeeds", async () => {
    const { create } = await setup();
    const replies = await Promise.all(Array.from({ length: 5 }, () => create({ name: "Race" })));
    expect(replies.filter((r) => r.body.data?.createCategory).length).toBe(1);
    expect(replies.filter((r) => r.body.errors?.[0]?.extensions?.code === "CONFLICT").length).toBe(4);
  });

  test("a missing required name is a GraphQL validation error, not a 5xx", async () => {
    const { create, graphql, owner } = await setup();
    const reply = await create({ description: "no name" });
    expect(reply.status).toBeLessThan(500);
    expect(reply.body.errors[0].message).toContain("name");
    const inline = await graphql("mutation { createCategory(input: {}) { id } }", { token: owner.token });
    expect(inline.status).toBeLessThan(500);
    expect(inline.body.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
  });
});

describe("updateCategory and deleteCategory", () => {
  test("the creator updates fields, null clears description and icon, absent fields stay", async () => {
    const { create, graphql, owner } = await setup();
    const id = (await create({ name: "Books", description: "Paper", icon: "book" })).body.data.createCategory.id;
    const reply = await graphql(UPDATE, {
      variables: { id, input: { colorHex: "#00ff00", description: null } },
      token: owner.token,
    });
    expect(reply.body.data.updateCategory).toEqual({
      id,
      name: "Books",
      description: null,
      colorHex: "#00FF00",
      icon: "book",
    });
  });

  test("another user gets FORBIDDEN and nothing changes", async () => {
    const { create, graphql, signUp, owner } = await setup();
    const id = (await create({ name: "Books" })).body.data.createCategory.id;
    const other = await signUp("other");
    expect(
      errorOf(await graphql(UPDATE, { variables: { id, input: { name: "Mine" } }, token: other.token })).extensions,
    ).toMatchObject({ code: "FORBIDDEN" });
    expect(errorOf(await graphql(DELETE, { variables: { id }, token: other.token })).extensions).toMatchObject({
      code: "FORBIDDEN",
    });
    const list = await graphql(LIST, { token: owner.token });
    expect(list.body.data.categories.map((c: { name: string }) => c.name)).toEqual(["Books"]);
  });

  test("an unknown id is NOT_FOUND", async () => {
    const { graphql, owner } = await setup();
    const id = "01937a6e-0000-7000-8000-000000000000";
    expect(
      errorOf(await graphql(UPDATE, { variables: { id, input: { name: "x" } }, token: owner.token })).extensions,
    ).toMatchObject({ code: "NOT_FOUND" });
    expect(
      errorOf(await graphql(DELETE, { variables: { id: "malformed" }, token: owner.token })).extensions,
    ).toMatchObject({ code: "NOT_FOUND" });
  });

  test("renaming onto a taken name is CONFLICT; null for name or colorHex is BAD_USER_INPUT", async () => {
    const { create, graphql, owner } = await setup();
    await create({ name: "Books" });
    const id = (await create({ name: "Films" })).body.data.createCategory.id;
    expect(
      errorOf(await graphql(UPDATE, { variables: { id, input: { name: "books" } }, token: owner.token })).extensions,
    ).toMatchObject({ code: "CONFLICT" });
    expect(
      errorOf(await graphql(UPDATE, { variables: { id, input: { name: null } }, token: owner.token })).extensions,
    ).toMatchObject({ code: "BAD_USER_INPUT", field: "name" });
    expect(
      errorOf(await graphql(UPDATE, { variables: { id, input: { colorHex: null } }, token: owner.token })).extensions,
    ).toMatchObject({ code: "BAD_USER_INPUT", field: "colorHex" });
  });

  test("a stale ifVersion is CONFLICT too, told apart from a taken name by reason version_mismatch", async () => {
    const { create, graphql, owner } = await setup();
    const id = (await create({ name: "Books" })).body.data.createCategory.id;
    const update = (name: string) =>
      graphql(
        "mutation ($id: ID!, $name: String!) { updateCategory(id: $id, input: { name: $name }, ifVersion: 1) { version } }",
        {
          variables: { id, name },
          token: owner.token,
        },
      );
    expect((await update("Paper")).body.data.updateCategory).toEqual({ version: 2 });
    expect(errorOf(await update("Films")).extensions).toEqual({
      code: "CONFLICT",
      reason: "version_mismatch",
      currentVersion: 2,
    });
  });

  test("the creator deletes: true, and the category is gone", async () => {
    const { create, graphql, owner } = await setup();
    const id = (await create({ name: "Books" })).body.data.createCategory.id;
    expect((await graphql(DELETE, { variables: { id }, token: owner.token })).body).toEqual({
      data: { deleteCategory: true },
    });
    expect((await graphql(LIST, { token: owner.token })).body.data.categories).toEqual([]);
  });
});

describe("SVC_GRAPHQL_AUTH", () => {
  test("required (default): HTTP 401 UNAUTHENTICATED without a token or with a bad one", async () => {
    const { graphql } = await setup();
    for (const token of [undefined, "not-a-token"]) {
      const reply = await graphql(LIST, { token });
      expect(reply.status).toBe(401);
      expect(reply.headers.get("www-authenticate")).toStartWith("Bearer");
      expect(errorOf(reply).extensions).toEqual({ code: "UNAUTHENTICATED", reason: "unauthorized" });
    }
  });

  test("mutations: queries are public, a mutation without a token is 401 UNAUTHENTICATED", async () => {
    const { graphql, create, owner } = await setup({ config: { graphql: { auth: "mutations" } } });
    expect((await graphql(LIST)).body).toEqual({ data: { categories: [] } });
    const anonymous = await graphql('mutation { createCategory(input: { name: "x" }) { id } }');
    expect(anonymous.status).toBe(401);
    expect(errorOf(anonymous).extensions).toEqual({ code: "UNAUTHENTICATED", reason: "unauthorized" });
    expect((await create({ name: "Mine" })).body.data.createCategory.name).toBe("Mine");
    expect((await graphql(LIST, { token: "bad-token" })).status).toBe(401);
    expect((await graphql(LIST, { token: owner.token })).status).toBe(200);
  });

  test("off: no token needed, categories have no creator and anyone may change them", async () => {
    const { graphql, store } = await setup({ config: { graphql: { auth: "off" } } });
    const created = await graphql('mutation { createCategory(input: { name: "Open" }) { id } }');
    const id = created.body.data.createCategory.id;
    expect((await store.categories.findById(id))?.createdBy).toBeNull();
    const updated = await graphql(UPDATE, { variables: { id, input: { icon: "door" } } });
    expect(updated.body.data.updateCategory.icon).toBe("door");
  });
});

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

describe("repeated queries (answered from the response cache)", () => {
  const names = (reply: { body: { data: { categories: Array<{ name: string }> } } }) =>
    reply.body.data.categories.map((c) => c.name);

  test("show every write at once: create, update, delete, and a write through another instance", async () => {
    const { graphql, owner, create, store } = await setup();
    const list = () => graphql("{ categories { name } }", { token: owner.token });
    expect(names(await list())).toEqual([]);
    const { id } = (await create({ name: "Books" })).body.data.createCategory;
    expect(names(await list())).toEqual(["Books"]);
    await graphql(UPDATE, { variables: { id, input: { name: "Comics" } }, token: owner.token });
    expect(names(await list())).toEqual(["Comics"]);
    await graphql(DELETE, { variables: { id }, token: owner.token });
    expect(names(await list())).toEqual([]);

    const other = await testApp({ on: store });
    const { token } = await other.signUp("other");
    await other.graphql('mutation { createCategory(input: { name: "Elsewhere" }) { id } }', { token });
    expect(names(await list())).toEqual(["Elsewhere"]);
  });

  test("a query's first runs arriving at once are all answered; what follows is the cached answer", async () => {
    const { call, owner, create, graphql } = await setup();
    await create({ name: "Books" });
    const burst = await Promise.all(
      Array.from({ length: 16 }, () => graphql("{ categories { name } }", { token: owner.token })),
    );
    expect(burst.map((reply) => names(reply))).toEqual(Array.from({ length: 16 }, () => ["Books"]));
    const metrics = (await call("GET", "/svc/metrics")).text;
    expect(metrics).toMatch(/^svc_graphql_cache_entries\{cache="responses".*\} 1$/m);
  });

  test("by GET too: repeats answered from memory, per caller, with the same tag; a write shows at once", async () => {
    const { call, owner, create, signUp } = await setup();
    await create({ name: "Books" });
    /** The GraphQL caches' entries, as /svc/metrics reports them. */
    const entries = async () =>
      Object.fromEntries(
        [
          ...(await call("GET", "/svc/metrics")).text.matchAll(
            /^svc_graphql_cache_entries\{cache="(\w+)".*\} (\d+)$/gm,
          ),
        ].map((m) => [m[1], Number(m[2])]),
      );
    const url = `/graphql?query=${encodeURIComponent("{ categories { name } }")}`;
    const tags = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const reply = await call("GET", url, { token: owner.token });
      expect(names(reply)).toEqual(["Books"]);
      tags.add(reply.headers.get("etag")!);
    }
    expect(tags.size).toBe(1);
    // Executed once, then answered from the cache.
    expect(await entries()).toMatchObject({ responses: 1 });
    // Not shared between callers: another caller's answer is kept apart.
    const other = await signUp("other");
    expect(names(await call("GET", url, { token: other.token }))).toEqual(["Books"]);
    expect(await entries()).toMatchObject({ responses: 2 });
    await create({ name: "Maps" });
    const after = await call("GET", url, { token: owner.token, headers: { "if-none-match": [...tags][0]! } });
    expect(after.status).toBe(200);
    expect(names(after)).toEqual(["Books", "Maps"]);
  });

  test("a failed answer is not kept: once the cause is gone the same query succeeds", async () => {
    let failures = 1;
    const flaky = (store: VersionedStore): VersionedStore => ({
      ...store,
      categories: {
        ...store.categories,
        list: () => (failures-- > 0 ? Promise.reject(new Error("flaky disk")) : store.categories.list()),
      },
    });
    const { graphql, owner } = await setup({ store: flaky });
    expect(errorOf(await graphql(LIST, { token: owner.token })).extensions).toMatchObject({
      code: "INTERNAL_SERVER_ERROR",
    });
    expect(await graphql(LIST, { token: owner.token })).toMatchObject({
      status: 200,
      body: { data: { categories: [] } },
    });
  });

  test("an identical mutation is executed again, never replayed", async () => {
    const { graphql, owner } = await setup();
    const make = 'mutation { createCategory(input: { name: "Once" }) { name } }';
    expect((await graphql(make, { token: owner.token })).body.data.createCategory.name).toBe("Once");
    expect(errorOf(await graphql(make, { token: owner.token })).extensions).toMatchObject({ code: "CONFLICT" });
  });

  test("each answer has its own request id and headers, and the media type the client accepts", async () => {
    const { call, owner } = await setup();
    const ask = (id: string, accept: string) =>
      call("POST", "/graphql", { body: { query: LIST }, token: owner.token, headers: { "x-request-id": id, accept } });
    const first = await ask("first", "application/json");
    const again = await ask("again", "application/json");
    expect(again.text).toBe(first.text);
    expect(again.headers.get("x-request-id")).toBe("again");
    expect(again.headers.get("cache-control")).toBe("no-store");
    expect(again.headers.get("content-type")).toStartWith("application/json");
    expect((await ask("spec", "application/graphql-response+json")).headers.get("content-type")).toStartWith(
      "application/graphql-response+json",
    );
    expect((await ask("json", "application/json")).headers.get("content-type")).toStartWith("application/json");
  });

  test("are still counted in the operation metrics", async () => {
    const { graphql, owner, call } = await setup();
    for (let i = 0; i < 3; i++) await graphql("query Counted { categories { id } }", { token: owner.token });
    expect((await call("GET", "/svc/metrics")).text).toMatch(
      /^svc_graphql_operations_total\{operation="Counted",outcome="ok",service="svc"\} 3$/m,
    );
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
