// GraphQL's categories in process: queries, createCategory, updateCategory and deleteCategory, and
// SVC_GRAPHQL_AUTH. Requests svc refuses are in graphql-requests.test.ts, the response cache in graphql-cache.test.ts.
import { describe, expect, test } from "bun:test";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
import { DELETE, LIST, UPDATE, errorOf, setup } from "../support/graphql.ts";

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
