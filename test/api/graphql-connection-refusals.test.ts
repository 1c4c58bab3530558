// categoriesConnection's refusals: arguments that cannot go together, sizes out of range, cursors that are
// not this connection's (or of another order), searches svc will not run, and an order it does not know;
// each with its exact code and the argument it names, and nothing read. On SQLite and PostgreSQL.
import { beforeAll, describe, expect, test } from "bun:test";
import { setup } from "../support/graphql.ts";

const PAGE = `query Page($first: Int, $after: String, $last: Int, $before: String, $search: String, $orderBy: CategoryOrder) {
  categoriesConnection(first: $first, after: $after, last: $last, before: $before, search: $search, orderBy: $orderBy) {
    edges { cursor node { name } }
  }
}`;

const cursorOf = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString("base64url");
const ID = "01937a6e-0000-7000-8000-000000000000";

describe("categoriesConnection refuses", () => {
  let app: Awaited<ReturnType<typeof setup>>;
  let nameCursor: string;

  beforeAll(async () => {
    app = await setup();
    await app.create({ name: "Alpha" });
    const reply = await app.graphql(PAGE, { variables: { first: 1 }, token: app.owner.token });
    nameCursor = reply.body.data.categoriesConnection.edges[0].cursor;
  });

  const ask = (variables: Record<string, unknown>) => app.graphql(PAGE, { variables, token: app.owner.token });

  test.each([
    ["first with last", { first: 1, last: 1 }, "last"],
    ["after with before", { after: "{c}", before: "{c}" }, "before"],
    ["first 0", { first: 0 }, "first"],
    ["first 1001", { first: 1001 }, "first"],
    ["first -1", { first: -1 }, "first"],
    ["last 0", { last: 0 }, "last"],
    ["last 1001", { last: 1001 }, "last"],
    ["a search of 65 characters", { search: "a".repeat(65) }, "search"],
    ["a search holding U+0000", { search: "a\u0000" }, "search"],
    ["a search holding a lone surrogate", { search: "a\ud800" }, "search"],
    ["an after that is no cursor", { after: "nope" }, "after"],
    ["a before that is no cursor", { before: "!!" }, "before"],
    ["a cursor that is not JSON", { after: Buffer.from("{").toString("base64url") }, "after"],
    ["a cursor of the wrong shape", { after: cursorOf({ id: ID }) }, "after"],
    ["a cursor with a number", { after: cursorOf(["name", 1, ID]) }, "after"],
    ["a cursor with no id", { after: cursorOf(["name", "alpha", "x"]) }, "after"],
    ["a cursor with U+0000", { after: cursorOf(["name", "a\u0000", ID]) }, "after"],
    ["a cursor naming no order", { after: cursorOf(["size", "alpha", ID]) }, "after"],
    [
      "a time cursor with no date",
      { after: cursorOf(["createdAt", "2026-13-45T00:00:00.000Z", ID]), orderBy: { field: "CREATED_AT" } },
      "after",
    ],
    [
      "a time cursor in year 0",
      { after: cursorOf(["createdAt", "0000-01-01T00:00:00.000Z", ID]), orderBy: { field: "CREATED_AT" } },
      "after",
    ],
    [
      "a time cursor written otherwise",
      { before: cursorOf(["updatedAt", "2026-01-01T00:00:00Z", ID]), orderBy: { field: "UPDATED_AT" } },
      "before",
    ],
    ["a cursor longer than any", { after: "A".repeat(1025) }, "after"],
  ])("%s: BAD_USER_INPUT naming it, and no data", async (_, given, field) => {
    const variables = Object.fromEntries(
      Object.entries(given).map(([name, value]) => [name, value === "{c}" ? nameCursor : value]),
    );
    const reply = await ask(variables);
    expect(reply.body.data).toBeNull();
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      reason: "validation_failed",
      field,
    });
  });

  test("a cursor of another orderBy, or the other direction, says so", async () => {
    for (const orderBy of [{ field: "CREATED_AT" }, { field: "NAME", direction: "DESC" }]) {
      const reply = await ask({ first: 1, after: nameCursor, orderBy });
      expect(reply.body.errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "after" });
      expect(reply.body.errors[0].extensions.errors[0].message).toContain("another orderBy");
    }
    expect(
      (await ask({ first: 1, after: nameCursor, orderBy: { field: "NAME", direction: "ASC" } })).body.errors,
    ).toBeUndefined();
  });

  test("every wrong argument at once, each in extensions.errors", async () => {
    const reply = await ask({ first: 0, last: 2000, search: "x".repeat(100) });
    expect(reply.body.errors[0].extensions.errors.map((e: { field: string }) => e.field)).toEqual([
      "first",
      "last",
      "last",
      "search",
    ]);
  });

  test("an unknown orderBy: BAD_USER_INPUT in variables, a validation error written inline", async () => {
    for (const orderBy of [{ field: "SIZE" }, { field: "NAME", direction: "UP" }, { direction: "ASC" }]) {
      const reply = await ask({ orderBy });
      expect(reply.body.data ?? null).toBeNull();
      expect(reply.body.errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT" });
    }
    const inline = await app.graphql("{ categoriesConnection(orderBy: { field: SIZE }) { totalCount } }", {
      token: app.owner.token,
    });
    expect(inline.body.errors[0].extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED" });
  });
});

test("the longest cursor svc writes is taken: a name of 64 characters JSON escapes", async () => {
  const app = await setup();
  const name = "\u0001".repeat(63) + "z";
  expect((await app.create({ name })).body.errors).toBeUndefined();
  await app.create({ name: "zz" });
  const first = await app.graphql(PAGE, { variables: { first: 1 }, token: app.owner.token });
  const cursor = first.body.data.categoriesConnection.edges[0].cursor;
  expect(cursor.length).toBeGreaterThan(512);
  const next = await app.graphql(PAGE, { variables: { first: 1, after: cursor }, token: app.owner.token });
  expect(next.body.data.categoriesConnection.edges.map((edge: { node: { name: string } }) => edge.node.name)).toEqual([
    "zz",
  ]);
});
