// The admin role through the public surface: the admin routes (and who may call them), disabling,
// the last-admin guard, and administrators' powers over categories. Reset codes are in
// admin-resets.test.ts, the audit log in admin-audit.test.ts.
import { describe, expect, test } from "bun:test";
import { expectProblem, testApp } from "../helpers.ts";
import { ADMIN, AUTH, adminApp } from "../support/admin.ts";

describe("who may call the admin routes", () => {
  test("every admin route: 401 without a token, 403 forbidden with a user's token, before anything else is read", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const id = ann.user.id;
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `${ADMIN}/users`],
      ["GET", `${ADMIN}/users?limit=nonsense`],
      ["GET", `${ADMIN}/users/${id}`],
      ["PATCH", `${ADMIN}/users/${id}`, { role: "admin" }],
      ["PATCH", `${ADMIN}/users/${id}`, { role: "emperor" }],
      ["DELETE", `${ADMIN}/users/${id}`],
      ["POST", `${ADMIN}/users/${id}/password-reset`],
      ["GET", `${ADMIN}/audit`],
      ["GET", `${ADMIN}/audit?action=nonsense`],
    ];
    for (const [method, path, body] of routes) {
      expectProblem(await app.call(method, path, { body }), 401, "unauthorized");
      expectProblem(await app.call(method, path, { body, token: ann.token }), 403, "forbidden");
    }
    // Nothing was changed by any of them.
    expect((await app.me(ann.token)).body.role).toBe("user");
    expect((await app.call("GET", `${ADMIN}/users/${id}`, { token: app.root.token })).status).toBe(200);
  });

  test("a promotion and a demotion take effect on the next request, without revoking the token", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    expect((await app.patch(ann.user.id, { role: "admin" })).body.role).toBe("admin");
    expect((await app.me(ann.token)).body.role).toBe("admin");
    expect((await app.call("GET", `${ADMIN}/users`, { token: ann.token })).status).toBe(200);
    expect((await app.patch(ann.user.id, { role: "user" })).body.role).toBe("user");
    expectProblem(await app.call("GET", `${ADMIN}/users`, { token: ann.token }), 403, "forbidden");
    expect((await app.me(ann.token)).status).toBe(200);
  });
});

describe("GET admin/users", () => {
  test("lists accounts with e-mail, role, status and last login; search, status and role filter; Link pages", async () => {
    const app = await adminApp();
    const alice = await app.signUp("alice");
    await app.signUp("Alfred");
    const bob = await app.signUp("bob");
    await app.call("POST", "/svc-api/v1/users/create", {
      body: { username: "never", email: "ALpha@example.com", password: "correct horse battery" },
    });
    const list = async (query: string) => {
      const reply = await app.call("GET", `${ADMIN}/users${query}`, { token: app.root.token });
      expect(reply.status).toBe(200);
      return reply;
    };
    const all = (await list("")).body;
    expect(all.map((u: { username: string }) => u.username)).toEqual(["root", "alice", "Alfred", "bob", "never"]);
    expect(all[1]).toEqual({
      id: alice.user.id,
      username: "alice",
      email: "alice@example.com",
      email_verified: false,
      email_verified_at: null,
      role: "user",
      status: "active",
      last_login_at: expect.stringMatching(/^\d{4}-.*Z$/),
      created_at: alice.user.created_at,
      updated_at: alice.user.updated_at,
    });
    expect(all[4].last_login_at).toBeNull();
    const names = async (query: string) => (await list(query)).body.map((u: { username: string }) => u.username);
    expect(await names("?search=AL")).toEqual(["alice", "Alfred", "never"]);
    expect(await names("?search=bob%40exa")).toEqual(["bob"]);
    expect(await names("?role=admin")).toEqual(["root"]);
    await app.patch(bob.user.id, { status: "disabled" });
    expect(await names("?status=disabled")).toEqual(["bob"]);
    expect(await names("?status=active&role=user")).toEqual(["alice", "Alfred", "never"]);

    const first = await list("?search=al&limit=2");
    expect(first.body.map((u: { username: string }) => u.username)).toEqual(["alice", "Alfred"]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link") ?? "")?.[1];
    expect(next).toBe(`${ADMIN}/users?search=al&limit=2&after=${first.body[1].id}`);
    const second = await app.call("GET", next!, { token: app.root.token });
    expect(second.body.map((u: { username: string }) => u.username)).toEqual(["never"]);
    expect(second.headers.get("link")).toBeNull();
  });

  test("bad parameters: 400 validation_failed naming each", async () => {
    const app = await adminApp();
    const bad = async (query: string, fields: string[]) => {
      const reply = await app.call("GET", `${ADMIN}/users${query}`, { token: app.root.token });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
    };
    await bad("?status=sleeping", ["status"]);
    await bad("?role=root", ["role"]);
    await bad("?limit=0", ["limit"]);
    await bad("?limit=1001&after=x", ["limit", "after"]);
    await bad("?sort=name", ["sort"]);
    await bad(`?search=${"a".repeat(255)}`, ["search"]);
  });
});

describe("GET and PATCH admin/users/{id}", () => {
  test("get: the account, or 404 not_found for an unknown or malformed id", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const got = await app.call("GET", `${ADMIN}/users/${ann.user.id}`, { token: app.root.token });
    expect(got.body).toMatchObject({ id: ann.user.id, email: "ann@example.com", role: "user", status: "active" });
    expectProblem(
      await app.call("GET", `${ADMIN}/users/${Bun.randomUUIDv7()}`, { token: app.root.token }),
      404,
      "not_found",
    );
    expectProblem(await app.call("GET", `${ADMIN}/users/not-an-id`, { token: app.root.token }), 404, "not_found");
  });

  test("disabling: every token and session of the user stops at once; the right password gets 403 account_disabled, a wrong one the ordinary 401", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const second = await app.login("ann", ann.password);
    const bob = await app.signUp("bob");
    const off = await app.patch(ann.user.id, { status: "disabled" }, app.root.token, "application/json");
    expect(off.status).toBe(200);
    expect(off.body.status).toBe("disabled");
    for (const token of [ann.token, second.body.token]) expectProblem(await app.me(token), 401, "unauthorized");
    expectProblem(
      await app.call("POST", `${AUTH}/refresh`, { body: { refresh_token: ann.refresh } }),
      401,
      "invalid_refresh_token",
    );
    expectProblem(await app.login("ann", ann.password), 403, "account_disabled");
    expectProblem(await app.login("ann", "not the password"), 401, "invalid_credentials");
    const graphql = await app.graphql("{ categories { id } }", { token: ann.token });
    expect(graphql.status).toBe(401);
    expect(graphql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    // Nothing beyond what it names: bob and root are untouched.
    expect((await app.me(bob.token)).status).toBe(200);
    expect((await app.me(app.root.token)).status).toBe(200);

    const on = await app.patch(ann.user.id, { status: "active" });
    expect(on.body.status).toBe("active");
    expectProblem(await app.me(ann.token), 401, "unauthorized");
    expect((await app.login("ann", ann.password)).status).toBe(200);
  });

  test("a change touches only the fields it names: disabling an admin keeps the role, promoting a disabled user keeps the status", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    await app.promote(ann.user.id);
    const disabled = await app.patch(ann.user.id, { status: "disabled" });
    expect(disabled.body).toMatchObject({ role: "admin", status: "disabled" });
    const bob = await app.signUp("bob");
    await app.patch(bob.user.id, { status: "disabled" });
    const promoted = await app.patch(bob.user.id, { role: "admin" });
    expect(promoted.body).toMatchObject({ role: "admin", status: "disabled" });
    const events = await app.audit("?action=admin.user.updated&limit=3");
    expect(events.map((e) => e.detail)).toEqual([{ role: "admin" }, { status: "disabled" }, { status: "disabled" }]);
  });

  test("bad changes: 400 (validation_failed or malformed_json), 415, 404; nothing changes", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const fields = async (body: unknown, expected: string[]) => {
      const reply = await app.patch(ann.user.id, body);
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(expected);
    };
    await fields({ role: "emperor" }, ["role"]);
    await fields({ status: "asleep" }, ["status"]);
    await fields({ role: null }, ["role"]);
    await fields({ email: "x@example.com" }, ["email"]);
    expectProblem(
      await app.call("PATCH", `${ADMIN}/users/${ann.user.id}`, {
        raw: "{",
        token: app.root.token,
        headers: { "content-type": "application/merge-patch+json" },
      }),
      400,
      "malformed_json",
    );
    expectProblem(
      await app.call("PATCH", `${ADMIN}/users/${ann.user.id}`, { raw: "role=admin", token: app.root.token }),
      415,
      "unsupported_media_type",
    );
    expectProblem(await app.patch(Bun.randomUUIDv7(), { role: "admin" }), 404, "not_found");
    expectProblem(await app.patch("nope", { role: "admin" }), 404, "not_found");
    expect(await app.patch(ann.user.id, {})).toMatchObject({ status: 200, body: { role: "user", status: "active" } });
    expect((await app.me(ann.token)).body.role).toBe("user");
  });
});

describe("the last active admin", () => {
  test("cannot be demoted, disabled or deleted (409 last_admin), by the admin routes or by deleting itself", async () => {
    const app = await adminApp();
    const id = app.root.user.id;
    expectProblem(await app.patch(id, { role: "user" }), 409, "last_admin");
    expectProblem(await app.patch(id, { status: "disabled" }), 409, "last_admin");
    expectProblem(await app.call("DELETE", `${ADMIN}/users/${id}`, { token: app.root.token }), 409, "last_admin");
    expectProblem(await app.call("DELETE", "/svc-api/v1/users", { token: app.root.token }), 409, "last_admin");
    expect((await app.me(app.root.token)).body.role).toBe("admin");

    // With a second admin, the first may step down.
    const ann = await app.signUp("ann");
    await app.patch(ann.user.id, { role: "admin" });
    expect((await app.patch(id, { role: "user" })).status).toBe(200);
    expectProblem(await app.patch(ann.user.id, { role: "user" }, ann.token), 409, "last_admin");
  });

  test("two admins demoting each other at once: one lands, the other is refused, one admin remains", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    await app.promote(ann.user.id);
    const replies = await Promise.all([
      app.patch(ann.user.id, { role: "user" }, app.root.token),
      app.patch(app.root.user.id, { status: "disabled" }, ann.token),
    ]);
    // The loser is refused by the guard (409) or, had the winner landed before it was authenticated,
    // as a demoted (403) or disabled (401) caller.
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([401, 403, 409]).toContain(statuses[1]!);
    const admins = await app.call("GET", `${ADMIN}/users?role=admin&status=active`, {
      token: replies[0]!.status === 200 ? app.root.token : ann.token,
    });
    expect(admins.body).toHaveLength(1);
  });
});

describe("DELETE admin/users/{id}", () => {
  test("204: the account's tokens stop, its categories stay with no creator; then 404", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const created = await app.graphql(`mutation { createCategory(input: { name: "Books" }) { id createdBy } }`, {
      token: ann.token,
    });
    expect(created.body.data.createCategory.createdBy).toBe(ann.user.id);
    const reply = await app.call("DELETE", `${ADMIN}/users/${ann.user.id}`, { token: app.root.token });
    expect(reply.status).toBe(204);
    expectProblem(await app.me(ann.token), 401, "unauthorized");
    const kept = await app.graphql("{ categories { name createdBy } }", { token: app.root.token });
    expect(kept.body.data.categories).toEqual([{ name: "Books", createdBy: null }]);
    expectProblem(
      await app.call("DELETE", `${ADMIN}/users/${ann.user.id}`, { token: app.root.token }),
      404,
      "not_found",
    );
  });
});

describe("categories: administrators may change any; Category.createdBy", () => {
  test("an admin updates and deletes another user's category; a user still only their own", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    const created = await app.graphql(`mutation { createCategory(input: { name: "Books" }) { id createdBy } }`, {
      token: ann.token,
    });
    const id = created.body.data.createCategory.id;
    const rename = (token: string, name: string) =>
      app.graphql(
        `mutation($id: ID!, $name: String) { updateCategory(id: $id, input: { name: $name }) { name createdBy } }`,
        {
          token,
          variables: { id, name },
        },
      );
    const refused = await rename(bob.token, "Mine");
    expect(refused.body.errors[0].extensions.code).toBe("FORBIDDEN");
    const renamed = await rename(app.root.token, "Old books");
    expect(renamed.body.data.updateCategory).toEqual({ name: "Old books", createdBy: ann.user.id });
    const refusedDelete = await app.graphql(`mutation { deleteCategory(id: "${id}") }`, { token: bob.token });
    expect(refusedDelete.body.errors[0].extensions.code).toBe("FORBIDDEN");
    const deleted = await app.graphql(`mutation { deleteCategory(id: "${id}") }`, { token: app.root.token });
    expect(deleted.body.data.deleteCategory).toBe(true);
  });

  test("createdBy is null for a category created with authentication off", async () => {
    const app = await testApp({ config: { graphql: { auth: "off" } } });
    const created = await app.graphql(`mutation { createCategory(input: { name: "Books" }) { createdBy } }`);
    expect(created.body.data.createCategory.createdBy).toBeNull();
  });
});
