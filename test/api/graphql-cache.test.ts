// Repeated GraphQL queries, answered from the response cache, in process.
import { describe, expect, test } from "bun:test";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
import { DELETE, LIST, UPDATE, errorOf, setup } from "../support/graphql.ts";

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
