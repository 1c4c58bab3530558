import { describe, expect, test } from "bun:test";
import { getIntrospectionQuery } from "graphql";
import { GRAPHQL_LIMITS, LIMIT_CODE } from "../../src/graphql/armor.ts";
import { CACHE_BOUNDS as ANSWER_BOUNDS } from "../../src/cache/caching.ts";
import { CACHE_BOUNDS } from "../../src/graphql/caches.ts";
import { testApp } from "../helpers.ts";

async function setup(graphql: { introspection?: boolean } = {}) {
  const app = await testApp({ config: { graphql } });
  const { token } = await app.signUp();
  return { ...app, ask: (query: string) => app.graphql(query, { token }) };
}

function refused(
  reply: {
    status: number;
    body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  },
  words: RegExp,
) {
  expect(reply.status).toBeLessThan(500);
  expect(reply.body.data ?? undefined).toBeUndefined();
  expect(reply.body.errors?.[0]?.message).toMatch(words);
  // One code for every limit, so a client can tell "simplify the query" from any other error.
  expect(reply.body.errors?.[0]?.extensions?.code).toBe(LIMIT_CODE);
}

describe("GraphQL abuse limits (GraphQL Armor), on by default", () => {
  test(`a refusal is ${LIMIT_CODE}: 400 for application/graphql-response+json, with nothing logged as an error`, async () => {
    const { call, signUp, logs } = await testApp();
    const { token } = await signUp();
    const many = `{ ${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: categories { id }`).join(" ")} }`;
    const reply = await call("POST", "/graphql", {
      body: { query: many },
      token,
      headers: { accept: "application/graphql-response+json" },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.errors[0]).toMatchObject({
      message: `Aliases limit of ${GRAPHQL_LIMITS.maxAliases} exceeded, found ${GRAPHQL_LIMITS.maxAliases + 1}.`,
      extensions: { code: LIMIT_CODE },
    });
    expect((await logs()).filter((line) => ["warn", "error"].includes(JSON.parse(line).level))).toEqual([]);
  });

  test(`depth beyond ${GRAPHQL_LIMITS.maxDepth} is refused, while the standard introspection query passes`, async () => {
    const { ask } = await setup();
    const standard = await ask(getIntrospectionQuery());
    expect(standard.body.errors).toBeUndefined();
    expect(standard.body.data.__schema.queryType.name).toBe("Query");
    const nested = `{ __schema { types { fields { type { ${"ofType { ".repeat(GRAPHQL_LIMITS.maxDepth)}name${" }".repeat(GRAPHQL_LIMITS.maxDepth)} } } } } }`;
    refused(await ask(nested), /depth/i);
  });

  test(`more than ${GRAPHQL_LIMITS.maxAliases} aliases are refused`, async () => {
    const { ask } = await setup();
    const ok = `{ ${Array.from({ length: GRAPHQL_LIMITS.maxAliases }, (_, i) => `a${i}: categories { id }`).join(" ")} }`;
    expect((await ask(ok)).body.errors).toBeUndefined();
    const many = `{ ${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: categories { id }`).join(" ")} }`;
    refused(await ask(many), /alias/i);
  });

  test(`more than ${GRAPHQL_LIMITS.maxDirectives} directives are refused`, async () => {
    const { ask } = await setup();
    const many = `{ categories { id ${"@skip(if: false) ".repeat(GRAPHQL_LIMITS.maxDirectives + 1)} } }`;
    refused(await ask(many), /directive/i);
  });

  test(`more than ${GRAPHQL_LIMITS.maxTokens} tokens are refused`, async () => {
    const { ask } = await setup();
    const many = `{ categories { ${"id ".repeat(GRAPHQL_LIMITS.maxTokens)} } }`;
    refused(await ask(many), /token/i);
  });

  test(`a query costing more than ${GRAPHQL_LIMITS.maxCost} is refused`, async () => {
    const { ask } = await setup();
    const fields = "id name description colorHex icon createdAt updatedAt";
    const costly = `{ ${Array.from({ length: GRAPHQL_LIMITS.maxAliases }, (_, i) => `a${i}: categories { ${`${fields} `.repeat(80)} }`).join(" ")} }`;
    refused(await ask(costly), /cost|token/i);
  });

  test("batched requests are refused", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp();
    const reply = await call("POST", "/graphql", {
      raw: JSON.stringify([{ query: "{ categories { id } }" }, { query: "{ categories { id } }" }]),
      token,
      headers: { "content-type": "application/json" },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.errors[0].message).toMatch(/batching/i);
  });

  test("field suggestions are given in development and withheld where introspection is off", async () => {
    const open = await setup({ introspection: true });
    expect((await open.ask("{ categories { nam } }")).body.errors[0].message).toContain("Did you mean");
    const closed = await setup({ introspection: false });
    const reply = await closed.ask("{ categories { nam } }");
    expect(reply.body.errors[0].message).not.toContain("Did you mean");
    expect(reply.body.errors[0].message).not.toContain("name");
  });
});

describe("caches filled by distinct documents stay within their bounds", () => {
  const cacheSizes = (metrics: string) =>
    Object.fromEntries(
      [...metrics.matchAll(/^svc_graphql_cache_entries\{cache="(\w+)"[^}]*\} (\d+)$/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    );

  test("3,000 distinct queries (and 600 distinct syntax errors): every cache at or under its bound; one-off documents are not kept", async () => {
    const { ask, call, graphql, signUp } = await setup();
    const { token } = await signUp("again");
    for (let i = 0; i < 3000; i++) await ask(`query Q${i} { categories { id } }`);
    for (let i = 0; i < 600; i++) await ask(`query Broken${i} { categories { id `);
    const sizes = cacheSizes((await call("GET", "/svc/metrics")).text);
    expect(sizes).toEqual({
      documents: 0,
      seen: CACHE_BOUNDS.seen.entries,
      parseErrors: CACHE_BOUNDS.parseErrors.entries,
      responses: ANSWER_BOUNDS.answers.entries,
    });
    // Documents that come again are kept, up to the bound (other variables each time, so that the
    // answer is not simply reused).
    const twice = async (query: string) => {
      for (let k = 0; k < 2; k++) await graphql(query, { token, variables: { id: Bun.randomUUIDv7() } });
    };
    for (let i = 0; i < 300; i++) await twice(`query R${i}($id: ID!) { category(id: $id) { id } }`);
    expect(cacheSizes((await call("GET", "/svc/metrics")).text)).toMatchObject({
      documents: CACHE_BOUNDS.documents.entries,
    });
  }, 60_000);

  test("a document cache sized by characters: long documents are fewer", async () => {
    const { call, graphql, signUp } = await setup();
    const { token } = await signUp("long");
    const padding = " ".repeat(8 * 1024);
    // Each twice, so that it is kept (and with other variables, so that the answer is not reused).
    for (let i = 0; i < 400; i++)
      for (let k = 0; k < 2; k++)
        await graphql(`query Long${i}($id: ID!) {${padding} category(id: $id) { id } }`, {
          token,
          variables: { id: Bun.randomUUIDv7() },
        });
    const { documents } = cacheSizes((await call("GET", "/svc/metrics")).text);
    expect(documents).toBeGreaterThan(100);
    expect(documents).toBeLessThanOrEqual(Math.floor(CACHE_BOUNDS.documents.chars / (8 * 1024)));
  }, 60_000);
});
