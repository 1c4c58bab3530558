// The client pages both ways: users.page with next, prev and first and the total, users.list on top of it,
// and categories.connection forwards and backwards through the Relay connection. Against the app in process.
import { beforeAll, describe, expect, test } from "bun:test";
import { type Client, createClient, type User } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";

const PASSWORD = "correct horse battery";

let client: Client;

beforeAll(async () => {
  const svc = await testApp();
  for (const name of ["bob", "cid", "dan", "eve"]) await svc.signUp(name);
  client = createClient({
    baseUrl: "http://localhost",
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => svc.app.handle(new Request(input, init))) as typeof fetch,
  });
  await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  await client.auth.login({ username: "ann", password: PASSWORD });
  for (const name of ["delta", "Alpha", "echo", "bravo", "Charlie"]) await client.categories.create({ name });
});

const usernames = (users: User[]) => users.map((user) => user.username);

describe("users.page", () => {
  test("pages forwards by next and back by prev, with the total when asked for", async () => {
    const first = await client.users.page({ limit: 2, count: true });
    expect({ users: usernames(first.users), total: first.total, prev: first.prev, first: first.first }).toEqual({
      users: ["bob", "cid"],
      total: 5,
      prev: null,
      first: null,
    });
    const second = await client.users.page(first.next!);
    expect(usernames(second.users)).toEqual(["dan", "eve"]);
    expect(second.total).toBe(5);
    const last = await client.users.page(second.next!);
    expect({ users: usernames(last.users), next: last.next }).toEqual({ users: ["ann"], next: null });
    const back = await client.users.page(last.prev!);
    expect(usernames(back.users)).toEqual(["dan", "eve"]);
    expect(usernames((await client.users.page(back.prev!)).users)).toEqual(["bob", "cid"]);
    expect(usernames((await client.users.page(back.first!)).users)).toEqual(["bob", "cid"]);
  });

  test("before a user's id: the page just before it, still oldest first; no total unless asked", async () => {
    const everyone = (await client.users.page()).users;
    const page = await client.users.page({ limit: 2, before: everyone[3]!.id });
    expect(usernames(page.users)).toEqual(["cid", "dan"]);
    expect(page.total).toBeNull();
    expect(page.next).not.toBeNull();
  });

  test("svc's refusal is an SvcError: after with before", async () => {
    const everyone = (await client.users.page()).users;
    const refused = await client.users
      .page({ after: everyone[0]!.id, before: everyone[1]!.id })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "validation_failed", status: 400 });
  });

  test("users.list still walks every user", async () => {
    const seen: string[] = [];
    for await (const user of client.users.list({ limit: 2 })) seen.push(user.username);
    expect(seen).toEqual(["bob", "cid", "dan", "eve", "ann"]);
  });
});

describe("categories.connection", () => {
  test("forwards by endCursor, backwards by startCursor, with pageInfo and the total", async () => {
    const names = (page: Awaited<ReturnType<Client["categories"]["connection"]>>) =>
      page.edges.map((edge) => edge.node.name);
    const first = await client.categories.connection({ first: 2 });
    expect({ names: names(first), total: first.totalCount, info: first.pageInfo }).toMatchObject({
      names: ["Alpha", "bravo"],
      total: 5,
      info: { hasNextPage: true, hasPreviousPage: false },
    });
    const next = await client.categories.connection({ first: 2, after: first.pageInfo.endCursor });
    expect(names(next)).toEqual(["Charlie", "delta"]);
    expect(next.pageInfo.hasPreviousPage).toBe(true);
    const back = await client.categories.connection({ last: 2, before: next.pageInfo.startCursor });
    expect(names(back)).toEqual(["Alpha", "bravo"]);
    expect(back.edges[0]!.node).toMatchObject({ name: "Alpha", version: 1, colorHex: "#64748B" });
  });

  test("search and orderBy", async () => {
    const page = await client.categories.connection({ search: "A", orderBy: { field: "NAME", direction: "DESC" } });
    expect(page.edges.map((edge) => edge.node.name)).toEqual(["delta", "Charlie", "bravo", "Alpha"]);
    expect(page.totalCount).toBe(4);
    const newest = await client.categories.connection({ last: 1, orderBy: { field: "CREATED_AT" } });
    expect(newest.edges.map((edge) => edge.node.name)).toEqual(["Charlie"]);
  });

  test("a bad argument is an SvcError with the argument named", async () => {
    const refused = await client.categories.connection({ first: 1, last: 1 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "validation_failed", graphqlCode: "BAD_USER_INPUT" });
  });
});
