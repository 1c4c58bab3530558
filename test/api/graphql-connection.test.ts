// categoriesConnection, Relay's cursor connection over categories: forwards and backwards in every order,
// pageInfo on either side of a page, totalCount, search without regard to case, and the categories field
// unchanged beside it. On SQLite and (test:postgres) on PostgreSQL. Its refusals: graphql-connection-refusals.test.ts.
import { beforeAll, describe, expect, test } from "bun:test";
import { setup, UPDATE } from "../support/graphql.ts";
import { recordingStore } from "../support/recording-store.ts";

const PAGE = `query Page($first: Int, $after: String, $last: Int, $before: String, $search: String, $orderBy: CategoryOrder) {
  categoriesConnection(first: $first, after: $after, last: $last, before: $before, search: $search, orderBy: $orderBy) {
    edges { cursor node { id name createdAt updatedAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    totalCount
  }
}`;

interface Node {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}
interface Connection {
  edges: { cursor: string; node: Node }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
}

type Setup = Awaited<ReturnType<typeof setup>>;
type Order = { field: "NAME" | "CREATED_AT" | "UPDATED_AT"; direction: "ASC" | "DESC" };

const NAMES = ["delta", "Alpha", "echo", "bravo", "Charlie", "foxtrot", "Golf"];

describe("categoriesConnection", () => {
  let app: Setup;
  /** Every category, read once the updates are done. */
  let all: Node[];

  beforeAll(async () => {
    app = await setup();
    const ids: string[] = [];
    for (const name of NAMES) ids.push((await app.create({ name })).body.data.createCategory.id);
    // Updated in another order than created, so that each order is its own.
    for (const id of [ids[3], ids[0], ids[6]])
      await app.graphql(UPDATE, { variables: { id, input: { description: "changed" } }, token: app.owner.token });
    all = (await page({ first: 100 })).edges.map((edge) => edge.node);
  });

  async function page(variables: Record<string, unknown>): Promise<Connection> {
    const reply = await app.graphql(PAGE, { variables, token: app.owner.token });
    expect(reply.body.errors).toBeUndefined();
    return reply.body.data.categoriesConnection;
  }

  /** The list as the order sorts it, ties by id. */
  function sorted({ field, direction }: Order): string[] {
    const key = (node: Node) =>
      field === "NAME" ? node.name.toLowerCase() : field === "CREATED_AT" ? node.createdAt : node.updatedAt;
    const ascending = [...all].sort((a, b) => (key(a) === key(b) ? (a.id < b.id ? -1 : 1) : key(a) < key(b) ? -1 : 1));
    return (direction === "DESC" ? ascending.reverse() : ascending).map((node) => node.name);
  }

  const names = (connection: Connection) => connection.edges.map((edge) => edge.node.name);

  test("without arguments: every category by name, nothing on either side, and the total", async () => {
    const whole = await page({});
    expect(names(whole)).toEqual(["Alpha", "bravo", "Charlie", "delta", "echo", "foxtrot", "Golf"]);
    expect(whole.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: false,
      startCursor: whole.edges[0]!.cursor,
      endCursor: whole.edges[6]!.cursor,
    });
    expect(whole.totalCount).toBe(7);
  });

  const orders: Order[] = (["NAME", "CREATED_AT", "UPDATED_AT"] as const).flatMap((field) =>
    (["ASC", "DESC"] as const).map((direction) => ({ field, direction })),
  );

  test.each(orders.map((order) => [`${order.field} ${order.direction}`, order] as const))(
    "%s: first/after walks forwards and last/before backwards through the same list",
    async (_, orderBy) => {
      const forwards: string[] = [];
      let after: string | null = null;
      let previous = false;
      for (;;) {
        const next: Connection = await page({ first: 3, after, orderBy });
        expect(next.pageInfo.hasPreviousPage).toBe(previous);
        expect(next.totalCount).toBe(7);
        forwards.push(...names(next));
        if (!next.pageInfo.hasNextPage) break;
        after = next.pageInfo.endCursor;
        previous = true;
      }
      expect(forwards).toEqual(sorted(orderBy));

      const backwards: string[][] = [];
      let before: string | null = null;
      for (;;) {
        const prev: Connection = await page({ last: 3, before, orderBy });
        expect(prev.pageInfo.hasNextPage).toBe(before !== null);
        backwards.unshift(names(prev));
        if (!prev.pageInfo.hasPreviousPage) break;
        before = prev.pageInfo.startCursor;
      }
      expect(backwards.flat()).toEqual(sorted(orderBy));
      // From the end: the last page is the short one going forwards, the first one going backwards.
      expect(backwards.map((part) => part.length)).toEqual([1, 3, 3]);
    },
  );

  test("the cursor of any edge starts the next page after it, and the page before it", async () => {
    const whole = await page({ first: 7 });
    const third = whole.edges[2]!.cursor;
    expect(names(await page({ first: 2, after: third }))).toEqual(["delta", "echo"]);
    expect(names(await page({ last: 2, before: third }))).toEqual(["Alpha", "bravo"]);
    // first with before: the first of those before it; last with after: the last of those after it.
    expect(names(await page({ first: 1, before: third }))).toEqual(["Alpha"]);
    const tail = await page({ last: 2, after: third });
    expect(names(tail)).toEqual(["foxtrot", "Golf"]);
    expect(tail.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    // Only before given: the default page just before it.
    expect(names(await page({ before: third }))).toEqual(["Alpha", "bravo"]);
  });

  test("a page past either end is empty, with null cursors, and says what lies on its other side", async () => {
    const whole = await page({ first: 7 });
    const past = await page({ first: 3, after: whole.pageInfo.endCursor });
    expect(past).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
      totalCount: 7,
    });
    const ahead = await page({ last: 3, before: whole.pageInfo.startCursor });
    expect(ahead.edges).toEqual([]);
    expect(ahead.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  test("search keeps names holding the text, without regard to case; totalCount counts the matches", async () => {
    const found = await page({ search: "O" });
    expect(names(found)).toEqual(["bravo", "echo", "foxtrot", "Golf"]);
    expect(found.totalCount).toBe(4);
    const paged = await page({ search: "o", first: 3 });
    expect({ names: names(paged), next: paged.pageInfo.hasNextPage }).toEqual({
      names: ["bravo", "echo", "foxtrot"],
      next: true,
    });
    const rest = await page({ search: "o", first: 3, after: paged.pageInfo.endCursor });
    expect({ names: names(rest), info: rest.pageInfo.hasNextPage, prev: rest.pageInfo.hasPreviousPage }).toEqual({
      names: ["Golf"],
      info: false,
      prev: true,
    });
    expect(names(await page({ search: "  ALPHA " }))).toEqual(["Alpha"]);
    expect(names(await page({ search: "" }))).toHaveLength(7);
  });

  test("search takes % and _ as themselves, not as wildcards", async () => {
    expect(await page({ search: "%" })).toMatchObject({ edges: [], totalCount: 0 });
    expect(await page({ search: "_" })).toMatchObject({ edges: [], totalCount: 0 });
    expect(await page({ search: "\\" })).toMatchObject({ edges: [], totalCount: 0 });
  });

  test("a cursor still places its page after its category is renamed or deleted", async () => {
    const extra = (await app.create({ name: "Hotel" })).body.data.createCategory.id;
    const upTo = await page({ first: 8 });
    const cursor = upTo.edges.find((edge) => edge.node.id === extra)!.cursor;
    await app.graphql("mutation ($id: ID!) { deleteCategory(id: $id) }", {
      variables: { id: extra },
      token: app.owner.token,
    });
    expect(names(await page({ last: 1, before: cursor }))).toEqual(["Golf"]);
    expect((await page({ first: 1, after: cursor })).edges).toEqual([]);
  });

  test("the categories field is as it was beside the connection", async () => {
    const reply = await app.graphql("{ categories(first: 2) { name } }", { token: app.owner.token });
    expect(reply.body).toEqual({ data: { categories: [{ name: "Alpha" }, { name: "bravo" }] } });
  });
});

test("totalCount is counted only when asked for: edges and pageInfo alone need no count", async () => {
  const calls: string[] = [];
  const app = await setup({ store: recordingStore(calls, ["categories"]) });
  await app.create({ name: "Alpha" });
  const reply = await app.graphql(
    "{ categoriesConnection(first: 1) { edges { node { name } } pageInfo { hasNextPage } } }",
    {
      token: app.owner.token,
    },
  );
  expect(reply.body).toEqual({
    data: { categoriesConnection: { edges: [{ node: { name: "Alpha" } }], pageInfo: { hasNextPage: false } } },
  });
  expect(calls.filter((call) => call.startsWith("categories.range") || call === "categories.count")).toEqual([
    "categories.range",
  ]);
  await app.graphql("{ categoriesConnection(first: 1) { totalCount } }", { token: app.owner.token });
  expect(calls.filter((call) => call === "categories.count")).toEqual(["categories.count"]);
});
