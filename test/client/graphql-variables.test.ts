// A typed document's required variables are required at compile time: `bun run typecheck` fails on a call
// that leaves them out (each @ts-expect-error below must hold), and svc's answer at run time agrees.
import { expect, test } from "bun:test";
import { createClient, type DocumentTypeDecoration, isSvcError } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";

/** A document as graphql-codegen's client preset types it (documentMode: "string"). */
function typed<Result, Variables>(source: string) {
  return Object.assign(new String(source), {}) as String & DocumentTypeDecoration<Result, Variables>;
}

type Category = { category: { name: string } | null };
/** `$id: ID!`: required. */
const CATEGORY = typed<Category, { id: string }>("query ($id: ID!) { category(id: $id) { name } }");
/** `$first: Int`: optional, as codegen types it. */
const FIRST = typed<{ categories: Array<{ id: string }> }, { first?: number | null }>(
  "query ($first: Int) { categories(first: $first) { id } }",
);
/** No variables at all. */
const ALL = typed<{ categories: Array<{ id: string }> }, Record<string, never>>("{ categories { id } }");

test("a typed document with a required variable needs it; optional or no variables may be left out", async () => {
  const { app, signUp } = await testApp();
  const { token } = await signUp("ann");
  const client = createClient({
    baseUrl: "http://localhost",
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      request.headers.set("authorization", `Bearer ${token}`);
      return app.handle(request);
    }) as typeof fetch,
  });

  expect((await client.graphql(CATEGORY, { id: crypto.randomUUID() })).category).toBeNull();
  expect((await client.graphql(FIRST)).categories).toEqual([]);
  expect((await client.graphql(FIRST, { first: 1 }, {})).categories).toEqual([]);
  expect((await client.graphql(ALL)).categories).toEqual([]);

  // @ts-expect-error $id is required: no variables
  const missing = await client.graphql(CATEGORY).catch((error: unknown) => error);
  // @ts-expect-error $id is required: variables without it
  await client.graphql(CATEGORY, {}).catch(() => null);
  // @ts-expect-error $id is a string
  await client.graphql(CATEGORY, { id: 1 }).catch(() => null);
  // What the compiler refuses, svc refuses too.
  expect(isSvcError(missing, "validation_failed")).toBe(true);
});
