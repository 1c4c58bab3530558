// Conditional requests: strong ETags on reads (If-None-Match → 304, no body) that change whenever
// what the caller would see changes, and If-Match on updates (stale → 412, nothing written). On
// SQLite and (test:postgres) on PostgreSQL.
import { mailOff } from "../support/mail-links.ts";
import { describe, expect, test } from "bun:test";
import { expectProblem, testApp, promote } from "../helpers.ts";

const USERS = "/svc-api/v1/users";

describe("ETag and If-None-Match", () => {
  test("users/all: 304 with no body while nothing changed; 200 with a new tag after another user's change", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const first = await call("GET", `${USERS}/all`, { token: ann.token });
    const tag = first.headers.get("etag")!;
    expect(tag).toMatch(/^"[0-9a-z]+-[0-9a-z]+"$/);
    const same = await call("GET", `${USERS}/all`, { token: ann.token, headers: { "if-none-match": tag } });
    expect(same.status).toBe(304);
    expect(same.text).toBe("");
    expect(same.headers.get("etag")).toBe(tag);
    // Also in a list, and in the weak form a proxy may send.
    for (const header of [`"x", ${tag}`, `W/${tag}`, "*"])
      expect(
        (await call("GET", `${USERS}/all`, { token: ann.token, headers: { "if-none-match": header } })).status,
      ).toBe(304);
    // Another user signs up: what ann sees changed.
    const bob = await signUp("bob");
    const changed = await call("GET", `${USERS}/all`, { token: ann.token, headers: { "if-none-match": tag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(tag);
    // bob sees the same users, but his own e-mail: another tag.
    const bobs = await call("GET", `${USERS}/all`, { token: bob.token });
    expect(bobs.headers.get("etag")).not.toBe(changed.headers.get("etag"));
  });

  test("the caller's own e-mail on their page: changing it changes their tag", async () => {
    const { call, signUp } = await testApp({ config: mailOff() });
    const ann = await signUp("ann");
    const tag = (await call("GET", `${USERS}/all`, { token: ann.token })).headers.get("etag")!;
    await call("PUT", USERS, { token: ann.token, body: { email: "ann@example.org", current_password: ann.password } });
    const after = await call("GET", `${USERS}/all`, { token: ann.token, headers: { "if-none-match": tag } });
    expect(after.status).toBe(200);
    expect(after.text).toContain("ann@example.org");
  });

  test("users/me, users/{id} and the admin reads carry tags and answer 304", async () => {
    const { call, signUp, store } = await testApp();
    const root = await signUp("root");
    await promote(store, root.user.id);
    const ann = await signUp("ann");
    for (const path of [
      `${USERS}/me`,
      `${USERS}/${ann.user.id}`,
      `/svc-api/v1/admin/users`,
      `/svc-api/v1/admin/users/${ann.user.id}`,
      `/svc-api/v1/admin/audit`,
    ]) {
      const first = await call("GET", path, { token: root.token });
      expect({ path, status: first.status }).toEqual({ path, status: 200 });
      const again = await call("GET", path, {
        token: root.token,
        headers: { "if-none-match": first.headers.get("etag")! },
      });
      expect({ path, status: again.status, text: again.text }).toEqual({ path, status: 304, text: "" });
    }
  });

  test("GraphQL queries by GET: a tag, 304 while unchanged, 200 after a category changes", async () => {
    const { call, signUp, graphql } = await testApp();
    const { token } = await signUp("ann");
    await graphql('mutation { createCategory(input: { name: "Books" }) { id } }', { token });
    const url = `/graphql?query=${encodeURIComponent("{ categories { name } }")}`;
    const first = await call("GET", url, { token });
    expect(first.status).toBe(200);
    const tag = first.headers.get("etag")!;
    expect(tag).toBeTruthy();
    expect((await call("GET", url, { token, headers: { "if-none-match": tag } })).status).toBe(304);
    await graphql('mutation { createCategory(input: { name: "Maps" }) { id } }', { token });
    const after = await call("GET", url, { token, headers: { "if-none-match": tag } });
    expect(after.status).toBe(200);
    expect(after.body.data.categories).toHaveLength(2);
  });
});

describe("If-Match", () => {
  test("PUT users with the current tag: 200 and the new tag; with a stale one: 412 and nothing written", async () => {
    const { call, signUp, store } = await testApp();
    const ann = await signUp("ann");
    const tag = (await call("GET", `${USERS}/me`, { token: ann.token })).headers.get("etag")!;
    const updated = await call("PUT", USERS, {
      token: ann.token,
      body: { username: "ann2" },
      headers: { "if-match": tag },
    });
    expect(updated.status).toBe(200);
    const newTag = updated.headers.get("etag")!;
    expect(newTag).not.toBe(tag);
    expect((await call("GET", `${USERS}/me`, { token: ann.token })).headers.get("etag")).toBe(newTag);
    const before = await store.users.findById(ann.user.id);
    const stale = await call("PUT", USERS, {
      token: ann.token,
      body: { username: "ann3" },
      headers: { "if-match": tag },
    });
    expectProblem(stale, 412, "precondition_failed");
    expect(await store.users.findById(ann.user.id)).toEqual(before);
    // The 412 names the version the record is at now: the client retries with it after reading what changed.
    expect(stale.headers.get("etag")).toBe(newTag);
  });

  test("a write retried with its Idempotency-Key is replayed with the same tag, and that tag matches the next read", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const tag = (await call("GET", `${USERS}/me`, { token: ann.token })).headers.get("etag")!;
    const send = () =>
      call("PUT", USERS, {
        token: ann.token,
        body: { username: "ann2" },
        headers: { "if-match": tag, "idempotency-key": "rename-1" },
      });
    const first = await send();
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("etag")).toBe(first.headers.get("etag"));
    expect((await call("GET", `${USERS}/me`, { token: ann.token })).headers.get("etag")).toBe(
      first.headers.get("etag"),
    );
  });

  test("two writers with one tag at once: one 200, the other 412", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    for (let round = 0; round < 5; round++) {
      const current = (await call("GET", `${USERS}/me`, { token: ann.token })).headers.get("etag")!;
      const replies = await Promise.all([
        call("PUT", USERS, { token: ann.token, body: { username: `a${round}x` }, headers: { "if-match": current } }),
        call("PUT", USERS, { token: ann.token, body: { username: `a${round}y` }, headers: { "if-match": current } }),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 412]);
    }
  });

  test("admin PATCH with a stale tag: 412, the account unchanged; with the current one: 200", async () => {
    const { call, signUp, store } = await testApp();
    const root = await signUp("root");
    await promote(store, root.user.id);
    const ann = await signUp("ann");
    const path = `/svc-api/v1/admin/users/${ann.user.id}`;
    const tag = (await call("GET", path, { token: root.token })).headers.get("etag")!;
    // Another administrator's change comes first.
    await call("PATCH", path, { token: root.token, body: { role: "admin" } });
    const stale = await call("PATCH", path, {
      token: root.token,
      body: { status: "disabled" },
      headers: { "if-match": tag },
    });
    expectProblem(stale, 412, "precondition_failed");
    expect((await store.users.findById(ann.user.id))!.status).toBe("active");
    const fresh = (await call("GET", path, { token: root.token })).headers.get("etag")!;
    expect(stale.headers.get("etag")).toBe(fresh);
    const ok = await call("PATCH", path, {
      token: root.token,
      body: { status: "disabled" },
      headers: { "if-match": fresh },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe("disabled");
  });
});

type App = Awaited<ReturnType<typeof testApp>>;

/** A write route that acts on one account: ann's own (by ann), or ann's as an administrator sees it (by root). */
interface AccountWrite {
  method: string;
  path: (annId: string) => string;
  body?: (password: string) => unknown;
  by: "self" | "admin";
  ok: number;
}

const ACCOUNT_WRITES: AccountWrite[] = [
  { method: "PUT", path: () => USERS, body: () => ({ username: "ann2" }), by: "self", ok: 200 },
  {
    method: "PUT",
    path: () => `${USERS}/password`,
    body: (password) => ({ current_password: password, new_password: "a brand new secret" }),
    by: "self",
    ok: 200,
  },
  { method: "DELETE", path: () => USERS, by: "self", ok: 204 },
  {
    method: "PATCH",
    path: (id) => `/svc-api/v1/admin/users/${id}`,
    body: () => ({ status: "disabled" }),
    by: "admin",
    ok: 200,
  },
  { method: "DELETE", path: (id) => `/svc-api/v1/admin/users/${id}`, by: "admin", ok: 204 },
  { method: "POST", path: (id) => `/svc-api/v1/admin/users/${id}/password-reset`, by: "admin", ok: 201 },
];

/** Everything a write on ann's account could change: her row, and the reset codes issued for her. */
async function accountState(store: App["store"], annId: string) {
  return {
    user: await store.users.findById(annId),
    resets: (await store.audit.list({ action: "password_reset.issued", limit: 10 })).length,
  };
}

describe("preconditions on writes (RFC 9110): 412 and nothing changes, never a 304", () => {
  for (const route of ACCOUNT_WRITES) {
    test(`${route.method} ${route.path(":id")}: If-None-Match * or the current tag, or a weak If-Match, is 412; the strong tag is ${route.ok}`, async () => {
      const { call, signUp, store } = await testApp();
      const root = await signUp("root");
      await promote(store, root.user.id);
      const ann = await signUp("ann");
      const caller = route.by === "self" ? ann : root;
      const read = route.by === "self" ? `${USERS}/me` : `/svc-api/v1/admin/users/${ann.user.id}`;
      const tag = (await call("GET", read, { token: caller.token })).headers.get("etag")!;
      const send = (headers: Record<string, string>) =>
        call(route.method, route.path(ann.user.id), { token: caller.token, body: route.body?.(ann.password), headers });
      const before = await accountState(store, ann.user.id);
      const refused: Record<string, string>[] = [
        { "if-none-match": "*" },
        { "if-none-match": tag },
        { "if-none-match": `"other", W/${tag}` },
        { "if-match": `W/${tag}` },
        { "if-match": '"stale-0"' },
        { "if-match": tag, "if-none-match": "*" },
      ];
      for (const headers of refused) {
        const reply = await send(headers);
        expect({ headers, status: reply.status }).toEqual({ headers, status: 412 });
        expectProblem(reply, 412, "precondition_failed");
        expect(await accountState(store, ann.user.id)).toEqual(before);
      }
      // A tag that is not the current one in If-None-Match, and the current one in If-Match: the write runs.
      const ok = await send({ "if-match": `"other", ${tag}`, "if-none-match": '"other"' });
      expect(ok.status).toBe(route.ok);
      expect(await accountState(store, ann.user.id)).not.toEqual(before);
    });
  }

  test("with an Idempotency-Key: the refused write is not kept as a 304; its retry is 412 again and changes nothing", async () => {
    const { call, signUp, store } = await testApp();
    const ann = await signUp("ann");
    const before = await store.users.findById(ann.user.id);
    const send = () =>
      call("PUT", USERS, {
        token: ann.token,
        body: { username: "ann2" },
        headers: { "if-none-match": "*", "idempotency-key": "rename-once" },
      });
    for (const reply of [await send(), await send()]) {
      expectProblem(reply, 412, "precondition_failed");
      expect(reply.headers.get("idempotent-replayed")).toBeNull();
    }
    expect(await store.users.findById(ann.user.id)).toEqual(before);
  });

  test("POST users/create has no representation: If-Match is 412 and creates nothing; If-None-Match: * creates", async () => {
    const { call, store } = await testApp();
    const body = { username: "ann", email: "ann@example.com", password: "correct horse battery" };
    for (const value of ["*", '"any"']) {
      expectProblem(
        await call("POST", `${USERS}/create`, { body, headers: { "if-match": value } }),
        412,
        "precondition_failed",
      );
    }
    expect(await store.counts()).toEqual({ users: 0, categories: 0 });
    expect((await call("POST", `${USERS}/create`, { body, headers: { "if-none-match": "*" } })).status).toBe(201);
  });

  test("the auth routes' writes have no representation: If-Match is 412 and changes nothing; If-None-Match holds", async () => {
    const { call, signUp, store } = await testApp();
    const ann = await signUp("ann");
    const sessionsOf = async () => (await call("GET", "/svc-api/v1/auth/sessions", { token: ann.token })).body.length;
    const [mine] = (await call("GET", "/svc-api/v1/auth/sessions", { token: ann.token })).body;
    const writes: Array<[string, string, { body?: unknown; token?: string }]> = [
      ["POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: ann.password } }],
      ["POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: ann.refresh } }],
      ["POST", "/svc-api/v1/auth/logout", { token: ann.token }],
      ["POST", "/svc-api/v1/auth/logout", { body: { refresh_token: ann.refresh } }],
      ["DELETE", `/svc-api/v1/auth/sessions/${mine.id}`, { token: ann.token }],
      [
        "POST",
        "/svc-api/v1/auth/password-reset",
        { body: { username: "ann", reset_code: "0000-0000", new_password: "another horse battery" } },
      ],
    ];
    for (const [method, path, options] of writes) {
      for (const value of ["*", '"any"']) {
        const reply = await call(method, path, { ...options, headers: { "if-match": value } });
        expect({ method, path, value, status: reply.status, code: reply.body?.code }).toEqual({
          method,
          path,
          value,
          status: 412,
          code: "precondition_failed",
        });
      }
    }
    // Nothing changed: one session still, its refresh token unspent, one user.
    expect(await sessionsOf()).toBe(1);
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
    const login = await call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: ann.password },
      headers: { "if-none-match": "*" },
    });
    expect(login.status).toBe(200);
    expect((await call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: ann.refresh } })).status).toBe(200);
  });

  test("a GraphQL mutation with If-Match: 412 PRECONDITION_FAILED and nothing created (a category's version goes in ifVersion)", async () => {
    const { call, signUp, store } = await testApp();
    const { token } = await signUp("ann");
    const body = { query: 'mutation { createCategory(input: { name: "Books" }) { id } }' };
    for (const value of ["*", '"any"']) {
      const reply = await call("POST", "/graphql", { token, body, headers: { "if-match": value } });
      expect({ status: reply.status, code: reply.body.errors[0].extensions.code }).toEqual({
        status: 412,
        code: "PRECONDITION_FAILED",
      });
    }
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
    // /graphql has no representation a mutation could match: If-None-Match holds, and the mutation runs.
    const created = await call("POST", "/graphql", { token, body, headers: { "if-none-match": "*" } });
    expect(created.status).toBe(200);
    expect(await store.counts()).toEqual({ users: 1, categories: 1 });
  });

  test("reads keep their 304: GET and HEAD with the current tag", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const tag = (await call("GET", `${USERS}/me`, { token: ann.token })).headers.get("etag")!;
    for (const method of ["GET", "HEAD"]) {
      for (const value of [tag, `W/${tag}`, "*"]) {
        const reply = await call(method, `${USERS}/me`, { token: ann.token, headers: { "if-none-match": value } });
        expect({ method, value, status: reply.status, text: reply.text }).toEqual({
          method,
          value,
          status: 304,
          text: "",
        });
      }
    }
  });
});
