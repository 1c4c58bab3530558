// No lost updates on categories: version starts at 1 and grows by one per update; updateCategory and
// deleteCategory with a stale ifVersion get CONFLICT naming extensions.currentVersion and change
// nothing. On SQLite and (test:postgres) on PostgreSQL.
import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers.ts";

const CREATE = `mutation Create($input: CreateCategoryInput!) { createCategory(input: $input) { id version } }`;
const UPDATE = `mutation Update($id: ID!, $input: UpdateCategoryInput!, $ifVersion: Int) {
  updateCategory(id: $id, input: $input, ifVersion: $ifVersion) { id name icon version }
}`;
const DELETE = "mutation Delete($id: ID!, $ifVersion: Int) { deleteCategory(id: $id, ifVersion: $ifVersion) }";
const ONE = "query One($id: ID!) { category(id: $id) { name icon version } }";

type Reply = Awaited<ReturnType<Awaited<ReturnType<typeof testApp>>["graphql"]>>;

function errorOf(reply: Reply): { message: string; extensions: Record<string, unknown> } {
  expect(reply.body.errors).toHaveLength(1);
  return reply.body.errors[0];
}

async function setup() {
  const app = await testApp();
  const owner = await app.signUp("owner");
  const id: string = (await app.graphql(CREATE, { token: owner.token, variables: { input: { name: "Books" } } })).body
    .data.createCategory.id;
  const update = (input: Record<string, unknown>, ifVersion?: unknown, token = owner.token) =>
    app.graphql(UPDATE, { token, variables: { id, input, ifVersion } });
  const remove = (ifVersion?: unknown, token = owner.token) =>
    app.graphql(DELETE, { token, variables: { id, ifVersion } });
  const current = async () => (await app.graphql(ONE, { token: owner.token, variables: { id } })).body.data.category;
  return { ...app, owner, id, update, remove, current };
}

describe("Category.version", () => {
  test("starts at 1 and grows by one with every update, with or without ifVersion", async () => {
    const { graphql, owner, update, current } = await setup();
    expect(await current()).toMatchObject({ version: 1 });
    expect((await update({ icon: "book" })).body.data.updateCategory.version).toBe(2);
    expect((await update({ icon: "shelf" }, 2)).body.data.updateCategory.version).toBe(3);
    expect(await current()).toEqual({ name: "Books", icon: "shelf", version: 3 });
    const listed = (await graphql("{ categories { version } listAllCategories { version } }", { token: owner.token }))
      .body.data;
    expect(listed).toEqual({ categories: [{ version: 3 }], listAllCategories: [{ version: 3 }] });
  });

  test("an update with nothing in it writes nothing and keeps the version", async () => {
    const { update } = await setup();
    expect((await update({}, 1)).body.data.updateCategory.version).toBe(1);
  });
});

describe("ifVersion", () => {
  // The same request gets the same bytes every time, however often its document has run.
  test("a stale update gets the same answer, byte for byte, every time it is sent", async () => {
    const { update } = await setup();
    await update({ icon: "book" });
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) texts.push((await update({ name: "Lost" }, 1)).text);
    expect(texts[0]).toStartWith('{"errors":[{"message":"The category changed since you read it');
    expect(texts[0]).toEndWith('"data":null}');
    expect(new Set(texts).size).toBe(1);
  });

  test("so does one under an alias, in a fragment: the error is located at the aliased field", async () => {
    const { graphql, owner, id, update } = await setup();
    await update({ icon: "book" });
    const query = `mutation Stale($id: ID!) { ...Edit }
fragment Edit on Mutation { again: updateCategory(id: $id, input: { name: "Lost" }, ifVersion: 1) { version } }`;
    const texts: string[] = [];
    for (let i = 0; i < 4; i++) texts.push((await graphql(query, { token: owner.token, variables: { id } })).text);
    expect(new Set(texts).size).toBe(1);
    expect(JSON.parse(texts[0]!).errors[0]).toMatchObject({
      locations: [{ line: 2, column: 29 }],
      path: ["again"],
      extensions: { code: "CONFLICT" },
    });
  });

  test("updateCategory with a stale version: CONFLICT with extensions.currentVersion, and nothing changes", async () => {
    const { update, current } = await setup();
    await update({ icon: "book" });
    const stale = await update({ name: "Lost" }, 1);
    expect(stale.status).toBe(200);
    expect(stale.body.data).toBeNull();
    const error = errorOf(stale);
    expect(error.extensions).toEqual({ code: "CONFLICT", reason: "version_mismatch", currentVersion: 2 });
    expect(error.message).toContain("version 2");
    expect(await current()).toEqual({ name: "Books", icon: "book", version: 2 });
    // Also when the update has nothing in it: the client learns its copy is stale.
    expect(errorOf(await update({}, 1)).extensions).toEqual({
      code: "CONFLICT",
      reason: "version_mismatch",
      currentVersion: 2,
    });
  });

  test("deleteCategory with a stale version: CONFLICT with extensions.currentVersion, and the category stays; with the current one it goes", async () => {
    const { update, remove, current } = await setup();
    await update({ icon: "book" });
    expect(errorOf(await remove(1)).extensions).toEqual({
      code: "CONFLICT",
      reason: "version_mismatch",
      currentVersion: 2,
    });
    expect(await current()).toMatchObject({ version: 2 });
    expect((await remove(2)).body).toEqual({ data: { deleteCategory: true } });
    expect(await current()).toBeNull();
    // Gone: NOT_FOUND, whatever the version.
    expect(errorOf(await remove(2)).extensions).toMatchObject({ code: "NOT_FOUND" });
  });

  test("a version no category can have is BAD_USER_INPUT naming ifVersion; a non-integer is a GraphQL validation error", async () => {
    const { update, remove, current } = await setup();
    for (const bad of [0, -1]) {
      expect(errorOf(await update({ name: "x" }, bad)).extensions).toMatchObject({
        code: "BAD_USER_INPUT",
        field: "ifVersion",
      });
      expect(errorOf(await remove(bad)).extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "ifVersion" });
    }
    for (const bad of ["1", 1.5]) {
      const reply = await update({ name: "x" }, bad);
      expect(reply.status).toBe(400);
      expect(errorOf(reply).extensions).toMatchObject({ code: "BAD_USER_INPUT" });
    }
    expect(await current()).toEqual({ name: "Books", icon: null, version: 1 });
  });

  test("another user's stale version is still FORBIDDEN, not a CONFLICT that would reveal the version", async () => {
    const { signUp, update, remove } = await setup();
    const other = await signUp("other");
    expect(errorOf(await update({ name: "Mine" }, 9, other.token)).extensions).toEqual({
      code: "FORBIDDEN",
      reason: "forbidden",
    });
    expect(errorOf(await remove(9, other.token)).extensions).toEqual({ code: "FORBIDDEN", reason: "forbidden" });
  });

  test("a taken name is CONFLICT without currentVersion", async () => {
    const { graphql, owner, update } = await setup();
    await graphql(CREATE, { token: owner.token, variables: { input: { name: "Films" } } });
    expect(errorOf(await update({ name: "films" }, 1)).extensions).toEqual({
      code: "CONFLICT",
      reason: "category_name_taken",
    });
  });

  test("two administrators' writers with one version at once: exactly one update wins, the rest get CONFLICT at version 2", async () => {
    const { update, current } = await setup();
    const replies = await Promise.all(["a", "b", "c", "d", "e"].map((icon) => update({ icon }, 1)));
    const won = replies.filter((r) => r.body.data?.updateCategory);
    expect(won).toHaveLength(1);
    for (const lost of replies.filter((r) => !r.body.data?.updateCategory))
      expect(errorOf(lost).extensions).toEqual({ code: "CONFLICT", reason: "version_mismatch", currentVersion: 2 });
    expect(await current()).toEqual({ name: "Books", icon: won[0]!.body.data.updateCategory.icon, version: 2 });
  });

  test("an update and a delete of one version at once: one of them wins, the other gets CONFLICT", async () => {
    const { update, remove, current } = await setup();
    const [updated, removed] = await Promise.all([update({ icon: "x" }, 1), remove(1)]);
    const outcomes = [updated.body.data?.updateCategory ? "updated" : "lost", removed.body.data ? "deleted" : "lost"];
    expect(outcomes.filter((o) => o === "lost")).toHaveLength(1);
    if (outcomes[0] === "updated") {
      expect(errorOf(removed).extensions).toEqual({ code: "CONFLICT", reason: "version_mismatch", currentVersion: 2 });
      expect(await current()).toMatchObject({ version: 2 });
    } else {
      // The delete went first: the update finds no category.
      expect(errorOf(updated).extensions).toMatchObject({ code: "NOT_FOUND" });
      expect(await current()).toBeNull();
    }
  });

  test("a retry with the Idempotency-Key of an update whose answer was lost gets that answer, not a CONFLICT", async () => {
    const { call, owner, id, current } = await setup();
    const send = () =>
      call("POST", "/graphql", {
        token: owner.token,
        headers: { "idempotency-key": "rename-books-1" },
        body: { query: UPDATE, variables: { id, input: { name: "Novels" }, ifVersion: 1 } },
      });
    const first = await send();
    const retry = await send();
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(retry.body.data.updateCategory.version).toBe(2);
    expect(await current()).toMatchObject({ name: "Novels", version: 2 });
  });
});
