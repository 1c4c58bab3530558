// The cache layer seen from outside: what reaches the database for repeated reads, and that every
// write, this app's or another's on the same database, is seen by the next request.
import { describe, expect, test } from "bun:test";
import type { VersionedStore } from "../src/db/store.ts";
import { testApp } from "./helpers.ts";

/** The store, counting the calls that reach the database. */
function counted(store: VersionedStore) {
  const calls: Record<string, number> = {};
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  const wrapped: VersionedStore = {
    ...store,
    versions: () => (count("versions"), store.versions()),
    tokenState: (...args) => (count("tokenState"), store.tokenState(...args)),
    users: {
      ...store.users,
      list: (page) => (count("users.list"), store.users.list(page)),
      findById: (id) => (count("users.findById"), store.users.findById(id)),
    },
    categories: { ...store.categories, list: (page) => (count("categories.list"), store.categories.list(page)) },
  };
  return { wrapped, calls };
}

const LIST = "{ categories { id name } }";

describe("the cache layer", () => {
  test("an authenticated repeated read is one statement: the token's, which also reads the table versions", async () => {
    let calls: Record<string, number> = {};
    const app = await testApp({
      store: (store) => {
        const c = counted(store);
        calls = c.calls;
        return c.wrapped;
      },
    });
    const { token } = await app.signUp("ann");
    await app.graphql(LIST, { token });
    await app.call("GET", "/svc-api/v1/users/all", { token });
    for (const key of Object.keys(calls)) delete calls[key];

    for (let i = 0; i < 3; i++) {
      expect((await app.call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
      expect((await app.graphql(LIST, { token })).status).toBe(200);
    }
    // The holder's record, the page, the list and the answer all come from memory.
    expect(calls).toEqual({ tokenState: 6 });
  });

  test("a request's own write is seen by its own later reads, and by the next request", async () => {
    const app = await testApp();
    const { token } = await app.signUp("ann");
    await app.call("GET", "/svc-api/v1/users/all", { token });
    const renamed = await app.call("PUT", "/svc-api/v1/users/", { token, body: { username: "anna" } });
    expect(renamed.body.username).toBe("anna");
    const page = await app.call("GET", "/svc-api/v1/users/all", { token });
    expect(page.body.map((u: { username: string }) => u.username)).toEqual(["anna"]);
    expect((await app.call("GET", "/svc-api/v1/users/me", { token })).body.username).toBe("anna");
  });

  test("a write through another app on the same database is seen at once: pages, lists, answers and token holders", async () => {
    const one = await testApp();
    const other = await testApp({ on: one.store });
    const { token } = await one.signUp("ann");
    const bob = await one.signUp("bob");
    // Fill every cache of the first app.
    await one.call("GET", "/svc-api/v1/users/all", { token });
    await one.graphql(LIST, { token });
    await one.graphql(LIST, { token });

    await other.signUp("cyd");
    expect((await one.call("GET", "/svc-api/v1/users/all", { token })).body).toHaveLength(3);
    const created = await other.graphql('mutation { createCategory(input: { name: "Books" }) { id } }', {
      token: bob.token,
    });
    expect(created.body.data.createCategory.id).toBeString();
    expect((await one.graphql(LIST, { token })).body.data.categories.map((c: { name: string }) => c.name)).toEqual([
      "Books",
    ]);
    // A password change elsewhere revokes the token here on its next use.
    const changed = await other.call("PUT", "/svc-api/v1/users/password", {
      token: bob.token,
      body: { current_password: bob.password, new_password: "another fine passphrase" },
    });
    expect(changed.status).toBe(200);
    expect((await one.call("GET", "/svc-api/v1/users/all", { token: bob.token })).status).toBe(401);
  });
});
