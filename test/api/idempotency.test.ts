// Idempotency-Key on every write it covers: a retry after a lost answer gets the first answer and
// changes nothing; the same key with another body is refused; a repeat while the first still runs is
// told to wait; a burst with one key runs once. On SQLite and (test:postgres) on PostgreSQL.
import { describe, expect, setSystemTime, test } from "bun:test";
import type { VersionedStore } from "../../src/db/store.ts";
import { expectProblem, testApp, promote } from "../helpers.ts";
import { claims } from "../support/sessions.ts";

const USERS = "/svc-api/v1/users";
const KEY = "Idempotency-Key";
const key = () => `k-${Bun.randomUUIDv7()}`;

describe("POST users/create with an Idempotency-Key", () => {
  test("a retry gets the first answer (201, Location, body) with Idempotent-Replayed, and creates nothing", async () => {
    const { call, store } = await testApp();
    const k = key();
    const body = { username: "ann", email: "ann@example.com", password: "correct horse battery" };
    const first = await call("POST", `${USERS}/create`, { body, headers: { [KEY]: k } });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    // The answer was lost; the client sends the very same request again.
    const again = await call("POST", `${USERS}/create`, { body, headers: { [KEY]: k } });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.body).toEqual(first.body);
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
    // Without a key, the same body is a new request: 409 as ever (the name or the e-mail taken).
    expect((await call("POST", `${USERS}/create`, { body })).status).toBe(409);
  });

  test("the same key with another body: 422 idempotency_key_reused, nothing changes", async () => {
    const { call, store } = await testApp();
    const k = key();
    await call("POST", `${USERS}/create`, {
      body: { username: "ann", email: "ann@example.com", password: "correct horse battery" },
      headers: { [KEY]: k },
    });
    const other = await call("POST", `${USERS}/create`, {
      body: { username: "bob", email: "bob@example.com", password: "correct horse battery" },
      headers: { [KEY]: k },
    });
    expectProblem(other, 422, "idempotency_key_reused");
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
  });

  test("20 parallel requests with one key: the account is created once; every answer is the 201 or 409 in flight", async () => {
    const { call, store } = await testApp();
    const k = key();
    const body = { username: "ann", email: "ann@example.com", password: "correct horse battery" };
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => call("POST", `${USERS}/create`, { body, headers: { [KEY]: k } })),
    );
    expect(await store.counts()).toEqual({ users: 1, categories: 0 });
    const created = replies.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(created.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    for (const r of created) expect(r.body).toEqual(created[0]!.body);
    for (const r of replies.filter((r) => r.status !== 201)) {
      expectProblem(r, 409, "idempotency_key_in_flight");
      expect(r.headers.get("retry-after")).toBe("1");
    }
  });

  test("a refusal is not kept: its retry runs again, and refused sign-ups under fresh keys leave no record", async () => {
    const { call, signUp, store } = await testApp({ config: { trustProxy: 1 } });
    await signUp("ann");
    const headers = (k: string) => ({ [KEY]: k, "x-forwarded-for": "192.0.2.7" });
    const k = key();
    const body = { username: "ann", email: "other@example.com", password: "correct horse battery" };
    const first = await call("POST", `${USERS}/create`, { body, headers: headers(k) });
    expectProblem(first, 409, "username_taken");
    const again = await call("POST", `${USERS}/create`, { body, headers: headers(k) });
    expectProblem(again, 409, "username_taken");
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    const keys = [k, ...Array.from({ length: 10 }, key)];
    for (const fresh of keys.slice(1)) {
      expectProblem(
        await call("POST", `${USERS}/create`, { body: { ...body, password: "short" }, headers: headers(fresh) }),
        400,
        "validation_failed",
      );
    }
    const now = new Date().toISOString();
    for (const held of keys) expect(await store.idempotency.find("client:192.0.2.7", digestOf(held), now)).toBeNull();
  });

  test("while a refused request still runs, its repeat is told to wait (409 in flight); once refused, the key is free", async () => {
    let gated = false;
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { call, signUp } = await testApp({
      store: (store: VersionedStore): VersionedStore => ({
        ...store,
        users: {
          ...store.users,
          async create(...args) {
            if (gated) {
              entered();
              await gate;
            }
            return store.users.create(...args);
          },
        },
      }),
    });
    await signUp("ann");
    gated = true;
    const k = key();
    const body = { username: "ann", email: "other@example.com", password: "correct horse battery" };
    const first = call("POST", `${USERS}/create`, { body, headers: { [KEY]: k } });
    await reached;
    expectProblem(
      await call("POST", `${USERS}/create`, { body, headers: { [KEY]: k } }),
      409,
      "idempotency_key_in_flight",
    );
    release();
    expectProblem(await first, 409, "username_taken");
    const retried = await call("POST", `${USERS}/create`, { body, headers: { [KEY]: k } });
    expectProblem(retried, 409, "username_taken");
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  test("a malformed key: 400 validation_failed naming Idempotency-Key, nothing created", async () => {
    const { call, store } = await testApp();
    const body = { username: "ann", email: "ann@example.com", password: "correct horse battery" };
    for (const bad of ["", "x".repeat(256), "tab\there", "é"]) {
      const reply = await call("POST", `${USERS}/create`, { body, headers: { [KEY]: bad } }).catch(() => null);
      // Some of these cannot even be sent as a header (fetch refuses "é"): then nothing reached svc.
      if (!reply) continue;
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors).toEqual([
        { field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" },
      ]);
    }
    expect(await store.counts()).toEqual({ users: 0, categories: 0 });
  });

  test("keys are the caller's own: another client's request with the same key runs on its own", async () => {
    const { app, store } = await testApp({ config: { trustProxy: 1 } });
    const k = key();
    const send = (address: string, username: string) =>
      app.handle(
        new Request(`http://localhost${USERS}/create`, {
          method: "POST",
          headers: { "content-type": "application/json", [KEY]: k, "x-forwarded-for": address },
          body: JSON.stringify({ username, email: `${username}@example.com`, password: "correct horse battery" }),
        }),
      );
    expect((await send("192.0.2.1", "ann")).status).toBe(201);
    expect((await send("192.0.2.2", "bob")).status).toBe(201);
    expect(await store.counts()).toEqual({ users: 2, categories: 0 });
  });
});

describe("authenticated writes with an Idempotency-Key", () => {
  test("PUT users: the retry gets the first answer and writes nothing more", async () => {
    const { call, signUp, store } = await testApp();
    const ann = await signUp("ann");
    const k = key();
    const put = () => call("PUT", USERS, { token: ann.token, body: { username: "ann2" }, headers: { [KEY]: k } });
    const first = await put();
    expect(first.status).toBe(200);
    const before = await store.users.findById(ann.user.id);
    const again = await put();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await store.users.findById(ann.user.id)).toEqual(before);
  });

  test("PUT users/password whose answer was lost: the retry, with the token it revoked, gets the same new pair", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const k = key();
    const body = { current_password: ann.password, new_password: "a brand new secret" };
    const first = await call("PUT", `${USERS}/password`, { token: ann.token, body, headers: { [KEY]: k } });
    expect(first.status).toBe(200);
    // The old token is revoked: without the key, or with another body, it is refused.
    expectProblem(await call("GET", `${USERS}/me`, { token: ann.token }), 401, "unauthorized");
    const again = await call("PUT", `${USERS}/password`, { token: ann.token, body, headers: { [KEY]: k } });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect((await call("GET", `${USERS}/me`, { token: again.body.token })).status).toBe(200);
    const otherBody = { ...body, new_password: "yet another secret" };
    expectProblem(
      await call("PUT", `${USERS}/password`, { token: ann.token, body: otherBody, headers: { [KEY]: k } }),
      401,
      "unauthorized",
    );
    expectProblem(
      await call("PUT", `${USERS}/password`, { token: ann.token, body, headers: { [KEY]: key() } }),
      401,
      "unauthorized",
    );
  });

  test("DELETE users and POST auth/logout: the retry is 204 again, not 401", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const k = key();
    expect((await call("POST", "/svc-api/v1/auth/logout", { token: ann.token, headers: { [KEY]: k } })).status).toBe(
      204,
    );
    const again = await call("POST", "/svc-api/v1/auth/logout", { token: ann.token, headers: { [KEY]: k } });
    expect(again.status).toBe(204);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const bob = await signUp("bob");
    const d = key();
    expect((await call("DELETE", USERS, { token: bob.token, headers: { [KEY]: d } })).status).toBe(204);
    const deletedAgain = await call("DELETE", USERS, { token: bob.token, headers: { [KEY]: d } });
    expect(deletedAgain.status).toBe(204);
    expect(deletedAgain.headers.get("idempotent-replayed")).toBe("true");
  });

  test("admin writes: a reset code's retry shows the same code, and issues no second one", async () => {
    const { call, signUp, store } = await testApp();
    const root = await signUp("root");
    await promote(store, root.user.id);
    const ann = await signUp("ann");
    const k = key();
    const issue = () =>
      call("POST", `/svc-api/v1/admin/users/${ann.user.id}/password-reset`, {
        token: root.token,
        headers: { [KEY]: k },
      });
    const first = await issue();
    const again = await issue();
    expect(again.status).toBe(201);
    expect(again.body.reset_code).toBe(first.body.reset_code);
    expect(await store.audit.list({ action: "password_reset.issued", limit: 10 })).toHaveLength(1);
    const patched = await call("PATCH", `/svc-api/v1/admin/users/${ann.user.id}`, {
      token: root.token,
      body: { status: "disabled" },
      headers: { [KEY]: key() },
    });
    expect(patched.body.status).toBe("disabled");
  });

  test("keys are per user: another user's request with the same key runs as its own", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const bob = await signUp("bob");
    const k = key();
    const a = await call("PUT", USERS, { token: ann.token, body: { username: "ann2" }, headers: { [KEY]: k } });
    const b = await call("PUT", USERS, { token: bob.token, body: { username: "ann2" }, headers: { [KEY]: k } });
    expect(a.status).toBe(200);
    expectProblem(b, 409, "username_taken");
    expect(b.headers.get("idempotent-replayed")).toBeNull();
  });

  test("the stored answers hold no token in clear: the password change's pair is sealed", async () => {
    const { call, signUp, store } = await testApp();
    const ann = await signUp("ann");
    const k = key();
    const changed = await call("PUT", `${USERS}/password`, {
      token: ann.token,
      body: { current_password: ann.password, new_password: "a brand new secret" },
      headers: { [KEY]: k },
    });
    // The answer carries tokens, so its key is the session's own.
    const { sid } = claims(ann.token);
    const held = await store.idempotency.find(
      `user:${ann.user.id}`,
      digestOf(`${sid}\0${k}`),
      new Date().toISOString(),
    );
    expect(held?.status).toBe(200);
    expect(held!.key).not.toBe(k);
    for (const secret of [changed.body.token, changed.body.refresh_token, "a brand new secret", k])
      expect(JSON.stringify(held)).not.toContain(secret);
  });
});

function digestOf(raw: string): string {
  return new Bun.CryptoHasher("sha256").update(raw).digest("base64url");
}

describe("GraphQL mutations with an Idempotency-Key", () => {
  const CREATE = "mutation ($input: CreateCategoryInput!) { createCategory(input: $input) { id name } }";

  test("a retried createCategory gets the first answer and creates one category; another input 422", async () => {
    const { call, signUp, store } = await testApp();
    const { token } = await signUp("ann");
    const k = key();
    const send = (name: string) =>
      call("POST", "/graphql", {
        token,
        body: { query: CREATE, variables: { input: { name } } },
        headers: { [KEY]: k },
      });
    const first = await send("Books");
    expect(first.status).toBe(200);
    const again = await send("Books");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await store.counts()).toEqual({ users: 1, categories: 1 });
    const other = await send("Maps");
    expect(other.status).toBe(422);
    expect(other.body.errors[0].extensions.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(await store.counts()).toEqual({ users: 1, categories: 1 });
  });

  test("10 parallel deleteCategory with one key: one deletion, one audit event, no NOT_FOUND", async () => {
    const { call, signUp, graphql, store } = await testApp();
    const { token } = await signUp("ann");
    const id = (await graphql(CREATE, { token, variables: { input: { name: "Books" } } })).body.data.createCategory.id;
    const k = key();
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        call("POST", "/graphql", {
          token,
          body: { query: `mutation { deleteCategory(id: "${id}") }` },
          headers: { [KEY]: k },
        }),
      ),
    );
    for (const r of replies) {
      if (r.status === 200) expect(r.body).toEqual({ data: { deleteCategory: true } });
      else
        expect({ status: r.status, code: r.body.errors[0].extensions.code }).toEqual({
          status: 409,
          code: "IDEMPOTENCY_KEY_IN_FLIGHT",
        });
    }
    expect(await store.audit.list({ action: "category.deleted", limit: 10 })).toHaveLength(1);
  });

  test("a refused mutation is not kept: its retry runs again", async () => {
    const { call, signUp, graphql, store } = await testApp();
    const { token } = await signUp("ann");
    await graphql(CREATE, { token, variables: { input: { name: "Books" } } });
    const k = key();
    const send = () =>
      call("POST", "/graphql", {
        token,
        body: { query: CREATE, variables: { input: { name: "books" } } },
        headers: { [KEY]: k },
      });
    for (const reply of [await send(), await send()]) {
      expect(reply.body.errors[0].extensions.code).toBe("CONFLICT");
      expect(reply.headers.get("idempotent-replayed")).toBeNull();
    }
    expect(await store.counts()).toEqual({ users: 1, categories: 1 });
  });

  test("queries ignore the key: they run as ever", async () => {
    const { call, signUp } = await testApp();
    const { token } = await signUp("ann");
    const reply = await call("POST", "/graphql", {
      token,
      body: { query: "{ categories { id } }" },
      headers: { [KEY]: key() },
    });
    expect(reply.body).toEqual({ data: { categories: [] } });
    expect(reply.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("the keys a caller holds are bounded (SVC_IDEMPOTENCY_KEYS_PER_CALLER)", () => {
  const body = (name: string) => ({ username: name, email: `${name}@example.com`, password: "correct horse battery" });

  test("an anonymous client past the bound: 429 idempotency_keys_exhausted with Retry-After and nothing created; its held keys replay, other clients are unaffected, a key frees as the oldest expires", async () => {
    const start = Date.parse("2026-11-21T10:00:00.000Z");
    setSystemTime(new Date(start));
    try {
      const { call, store, config } = await testApp({ config: { trustProxy: 1, idempotencyKeysPerCaller: 3 } });
      const from = (address: string, name: string, k = key()) =>
        call("POST", `${USERS}/create`, { body: body(name), headers: { [KEY]: k, "x-forwarded-for": address } });
      const first = key();
      expect((await from("192.0.2.1", "ann", first)).status).toBe(201);
      for (const name of ["bob", "cid"]) expect((await from("192.0.2.1", name)).status).toBe(201);
      const refused = await from("192.0.2.1", "dan");
      expectProblem(refused, 429, "idempotency_keys_exhausted");
      expect(refused.headers.get("retry-after")).toBe(String(config.idempotencyTtlSeconds));
      expect(await store.counts()).toEqual({ users: 3, categories: 0 });
      const replayed = await from("192.0.2.1", "ann", first);
      expect({ status: replayed.status, replayed: replayed.headers.get("idempotent-replayed") }).toEqual({
        status: 201,
        replayed: "true",
      });
      expect((await from("192.0.2.2", "eve")).status).toBe(201);
      // Without a key, nothing is kept: the request runs as ever.
      expect(
        (
          await call("POST", `${USERS}/create`, {
            body: body("fay"),
            headers: { "x-forwarded-for": "192.0.2.1" },
          })
        ).status,
      ).toBe(201);
      setSystemTime(new Date(start + config.idempotencyTtlSeconds * 1000 + 1000));
      expect((await from("192.0.2.1", "dan")).status).toBe(201);
    } finally {
      setSystemTime();
    }
  });

  test("a user's bound counts REST and GraphQL alike, on every instance of one database", async () => {
    const config = { idempotencyKeysPerCaller: 2 };
    const one = await testApp({ config });
    const two = await testApp({ config, on: one.store });
    const ann = await one.signUp("ann");
    const rename = (app: typeof one, name: string) =>
      app.call("PUT", USERS, { token: ann.token, body: { username: name }, headers: { [KEY]: key() } });
    const create = (app: typeof one, name: string) =>
      app.call("POST", "/graphql", {
        token: ann.token,
        body: { query: `mutation { createCategory(input: { name: "${name}" }) { id } }` },
        headers: { [KEY]: key() },
      });
    expect((await rename(one, "ann2")).status).toBe(200);
    expect((await create(two, "Books")).status).toBe(200);
    expectProblem(await rename(two, "ann3"), 429, "idempotency_keys_exhausted");
    const graphql = await create(one, "Maps");
    expect({ status: graphql.status, code: graphql.body.errors[0].extensions.code }).toEqual({
      status: 429,
      code: "IDEMPOTENCY_KEYS_EXHAUSTED",
    });
    expect(Number(graphql.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await one.store.counts()).toEqual({ users: 1, categories: 1 });
    expect((await one.store.users.findById(ann.user.id))!.username).toBe("ann2");
  });
});

describe("answers that carry tokens are kept per session", () => {
  test("a password change's kept answer is never replayed to another session: its revoked token with the same key and body is 401", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const other = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: ann.password } });
    const k = key();
    const body = { current_password: ann.password, new_password: "a brand new secret" };
    const changed = await call("PUT", `${USERS}/password`, { token: ann.token, body, headers: { [KEY]: k } });
    expect(changed.status).toBe(200);
    const stolen = await call("PUT", `${USERS}/password`, { token: other.body.token, body, headers: { [KEY]: k } });
    expectProblem(stolen, 401, "unauthorized");
    expect(stolen.text).not.toContain(changed.body.token);
    // The session that asked still gets its answer again.
    const again = await call("PUT", `${USERS}/password`, { token: ann.token, body, headers: { [KEY]: k } });
    expect(again.body).toEqual(changed.body);
  });

  test("DELETE users/: another session's revoked token with the first one's key is 401, not that session's answer", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const other = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: ann.password } });
    const k = key();
    expect((await call("DELETE", USERS, { token: ann.token, headers: { [KEY]: k } })).status).toBe(204);
    expectProblem(await call("DELETE", USERS, { token: other.body.token, headers: { [KEY]: k } }), 401, "unauthorized");
    expect((await call("DELETE", USERS, { token: ann.token, headers: { [KEY]: k } })).status).toBe(204);
  });

  test("POST auth/logout with one key from two sessions: each ends its own", async () => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const other = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: ann.password } });
    const k = key();
    expect((await call("POST", "/svc-api/v1/auth/logout", { token: ann.token, headers: { [KEY]: k } })).status).toBe(
      204,
    );
    const second = await call("POST", "/svc-api/v1/auth/logout", { token: other.body.token, headers: { [KEY]: k } });
    expect({ status: second.status, replayed: second.headers.get("idempotent-replayed") }).toEqual({
      status: 204,
      replayed: null,
    });
    expectProblem(await call("GET", `${USERS}/me`, { token: other.body.token }), 401, "unauthorized");
  });
});
