// client.graphql with typed documents (as graphql-codegen makes them), and categories.subscribe in process.
// The subscription's resuming through expiring tokens and a killed socket is proven against the binary
// (test/e2e/client.test.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { parse } from "graphql";
import { type CategoryEvent, createClient, type DocumentTypeDecoration } from "../../client/src/index.ts";
import { listen, stopAll } from "../subscriptions.ts";
import { testApp } from "../helpers.ts";

const PASSWORD = "correct horse battery";
afterAll(stopAll);

/** graphql-codegen's client preset in `documentMode: "string"` emits documents of this shape. */
class TypedDocumentString<Result, Variables> extends String implements DocumentTypeDecoration<Result, Variables> {
  __apiType?: DocumentTypeDecoration<Result, Variables>["__apiType"];
  constructor(private value: string) {
    super(value);
  }
  override toString(): string {
    return this.value;
  }
}

type Named = { categories: Array<{ id: string; name: string }> };
const NAMES = new TypedDocumentString<Named, { first?: number | null }>(
  "query ($first: Int) { categories(first: $first) { id name } }",
);

async function signedIn(on?: Awaited<ReturnType<typeof testApp>>) {
  const svc = on ?? (await testApp());
  const client = createClient({
    baseUrl: "http://localhost",
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => svc.app.handle(new Request(input, init))) as typeof fetch,
  });
  await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  await client.auth.login({ username: "ann", password: PASSWORD });
  return client;
}

describe("client.graphql", () => {
  test("a typed document types its result and variables", async () => {
    const client = await signedIn();
    await client.categories.create({ name: "Books" });
    await client.categories.create({ name: "Films" });
    const data = await client.graphql(NAMES, { first: 1 });
    const names: string[] = data.categories.map((category) => category.name);
    expect(names).toEqual(["Books"]);
    // @ts-expect-error first is a number
    await client.graphql(NAMES, { first: "1" }).catch(() => null);
    // A parsed document (a TypedDocumentNode) is sent by its source.
    const parsed = parse("{ categories { name } }") as ReturnType<typeof parse> &
      DocumentTypeDecoration<{ categories: Array<{ name: string }> }, Record<string, never>>;
    expect((await client.graphql(parsed)).categories).toHaveLength(2);
    // Without a typed document, the caller says what it expects.
    const untyped = await client.graphql<{ categories: unknown[] }>("{ categories { id } }");
    expect(untyped.categories).toHaveLength(2);
  });

  test("categories: list, get, update, delete", async () => {
    const client = await signedIn();
    const books = await client.categories.create({ name: "Books", colorHex: "#112233" });
    expect(await client.categories.get(books.id)).toMatchObject({ name: "Books", colorHex: "#112233", version: 1 });
    const updated = await client.categories.update(books.id, { description: "Read" }, { ifVersion: 1 });
    expect(updated).toMatchObject({ description: "Read", version: 2 });
    expect((await client.categories.list({ first: 10 })).map((category) => category.id)).toEqual([books.id]);
    expect(await client.categories.delete(books.id, { ifVersion: 2 })).toBe(true);
    expect(await client.categories.get(books.id)).toBeNull();
  });
});

describe("categories.subscribe", () => {
  test("hands on every change in order, then resumes after a given cursor with nothing twice", async () => {
    const svc = listen(await testApp());
    const writer = await signedIn(svc);
    const reader = createClient({ baseUrl: svc.url.replace(/\/graphql$/, "") });
    await reader.auth.login({ username: "ann", password: PASSWORD });
    const seen: CategoryEvent[] = [];
    let arrived: (() => void) | null = null;
    const three = new Promise<void>((resolve) => (arrived = resolve));
    let open: (() => void) | null = null;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const reported: unknown[] = [];
    const reportError = globalThis.reportError;
    globalThis.reportError = (error: unknown) => reported.push(error);
    const stop = reader.categories.subscribe(
      (event) => {
        seen.push(event);
        if (seen.length === 3) arrived?.();
        // A listener's own failure is reported, and the subscription goes on with the next event.
        if (seen.length === 1) throw new Error("the app's own bug");
      },
      { onOpen: () => open?.() },
    );
    // Without a cursor a subscription is live-only: from onOpen on, every change reaches it.
    await opened;
    for (const name of ["A", "B", "C"]) await writer.categories.create({ name });
    await three;
    stop();
    globalThis.reportError = reportError;
    expect(reported).toEqual([new Error("the app's own bug")]);
    expect(seen.map((event) => [event.kind, event.category?.name])).toEqual([
      ["CREATED", "A"],
      ["CREATED", "B"],
      ["CREATED", "C"],
    ]);
    const again: CategoryEvent[] = [];
    const done = new Promise<void>((resolve) => {
      const stopAgain = reader.categories.subscribe(
        (event) => {
          again.push(event);
          stopAgain();
          resolve();
        },
        { after: seen[0]!.cursor },
      );
    });
    await done;
    expect(again.map((event) => event.category?.name)).toEqual(["B"]);
  });
});
