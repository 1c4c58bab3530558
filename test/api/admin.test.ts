// The admin role through the public surface: the admin routes (and who may call them), disabling,
// reset codes, the last-admin guard, the audit log, and administrators' powers over categories.
import { describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import { canonicalResetCode, resetDigest } from "../../src/auth/reset-codes.ts";
import { blockAfter, expectProblem, promote as makeAdmin, testApp, type ConfigOverrides } from "../helpers.ts";

const ADMIN = "/svc-api/v1/admin";
const AUTH = "/svc-api/v1/auth";
const CODE_FORMAT = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An app with an administrator, `root`, and a way to make more. */
async function adminApp(config: ConfigOverrides = {}) {
  const app = await testApp({ config });
  const promote = (id: string) => makeAdmin(app.store, id);
  const root = await app.signUp("root");
  await promote(root.user.id);
  const me = (token: string) => app.call("GET", "/svc-api/v1/users/me", { token });
  const login = (username: string, password: string) =>
    app.call("POST", `${AUTH}/login`, { body: { username, password } });
  const patch = (id: string, body: unknown, token = root.token, type = "application/merge-patch+json") =>
    app.call("PATCH", `${ADMIN}/users/${id}`, { body, token, headers: { "content-type": type } });
  const issue = (id: string, token = root.token) => app.call("POST", `${ADMIN}/users/${id}/password-reset`, { token });
  const redeem = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.call("POST", `${AUTH}/password-reset`, { body, headers });
  const audit = async (query = "") => {
    const reply = await app.call("GET", `${ADMIN}/audit${query}`, { token: root.token });
    expect(reply.status).toBe(200);
    return reply.body as Array<Record<string, unknown>>;
  };
  return { ...app, root, promote, me, login, patch, issue, redeem, audit };
}

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

describe("password reset codes", () => {
  test("an admin issues a code (201, shown once); the user redeems it for a new password and a new session", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const issued = await app.issue(ann.user.id);
    expect(issued.status).toBe(201);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    expect(issued.body.reset_code).toMatch(CODE_FORMAT);
    const ttl = Date.parse(issued.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);

    // Read out loud and typed back: lower case, spaces for dashes.
    const typed = issued.body.reset_code.toLowerCase().replaceAll("-", " ");
    const redeemed = await app.redeem({ username: "ANN", reset_code: typed, new_password: "a brand new secret" });
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({ token_type: "Bearer", user: { id: ann.user.id, email: "ann@example.com" } });
    expect((await app.me(redeemed.body.token)).status).toBe(200);
    // Every earlier session and token is over; the old password too.
    expectProblem(await app.me(ann.token), 401, "unauthorized");
    expectProblem(
      await app.call("POST", `${AUTH}/refresh`, { body: { refresh_token: ann.refresh } }),
      401,
      "invalid_refresh_token",
    );
    expectProblem(await app.login("ann", ann.password), 401, "invalid_credentials");
    expect((await app.login("ann", "a brand new secret")).status).toBe(200);
    // Used once: the second time it is invalid.
    expectProblem(
      await app.redeem({ username: "ann", reset_code: issued.body.reset_code, new_password: "yet another secret" }),
      400,
      "invalid_reset_code",
    );
    const admin = await app.call("GET", `${ADMIN}/users/${ann.user.id}`, { token: app.root.token });
    expect(Date.parse(admin.body.last_login_at)).toBeGreaterThan(Date.parse(ann.user.created_at) - 1);
  });

  test("wrong, someone else's, replaced, expired, malformed, unknown user: 400 invalid_reset_code; nothing changes", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    const first = (await app.issue(ann.user.id)).body.reset_code;
    const second = (await app.issue(ann.user.id)).body.reset_code;
    const bobs = (await app.issue(bob.user.id)).body.reset_code;
    const tryCode = (username: string, reset_code: string) =>
      app.redeem({ username, reset_code, new_password: "a brand new secret" });
    expectProblem(await tryCode("ann", first), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", bobs), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", "0000-0000-0000-0000-0000-0000-0000-0000"), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", "not a code"), 400, "invalid_reset_code");
    expectProblem(await tryCode("nobody", second), 400, "invalid_reset_code");
    // One that expired a moment ago.
    const expired = "ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345-6789";
    await app.store.resets.issue(
      {
        digest: resetDigest(canonicalResetCode(expired)!),
        userId: bob.user.id,
        createdAt: new Date(Date.now() - 7200_000).toISOString(),
        expiresAt: new Date(Date.now() - 1000).toISOString(),
        issuedBy: null,
      },
      auditEvent("password_reset.issued", { origin: { address: "cli", requestId: null } }),
    );
    expectProblem(await tryCode("bob", expired), 400, "invalid_reset_code");
    expect((await app.me(ann.token)).status).toBe(200);
    expect((await app.me(bob.token)).status).toBe(200);
    expect((await tryCode("ann", second)).status).toBe(200);
  });

  test("bad bodies: 400 validation_failed naming the field (a weak new password among them), 415; the code is not spent", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const fields = async (body: unknown, expected: string[]) => {
      const reply = await app.call("POST", `${AUTH}/password-reset`, { body });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(expected);
    };
    await fields({ username: "ann", reset_code: code, new_password: "short" }, ["new_password"]);
    await fields({ username: "ann", reset_code: code, new_password: "password123" }, ["new_password"]);
    await fields({ username: "ann", reset_code: code }, ["new_password"]);
    await fields({ username: "ann", reset_code: code, new_password: "a brand new secret", admin: true }, ["admin"]);
    expectProblem(await app.call("POST", `${AUTH}/password-reset`, { raw: "x" }), 415, "unsupported_media_type");
    expect((await app.redeem({ username: "ann", reset_code: code, new_password: "a brand new secret" })).status).toBe(
      200,
    );
  });

  test("a disabled account's code: 403 account_disabled, and the code still works once enabled", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    await app.patch(ann.user.id, { status: "disabled" });
    const body = { username: "ann", reset_code: code, new_password: "a brand new secret" };
    expectProblem(await app.redeem(body), 403, "account_disabled");
    await app.patch(ann.user.id, { status: "active" });
    expect((await app.redeem(body)).status).toBe(200);
  });

  test("wrong codes are throttled like logins: 429 with Retry-After, and a right code then waits too", async () => {
    const app = await adminApp({
      loginThrottle: blockAfter(3),
    });
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const wrong = {
      username: "ann",
      reset_code: "0000-0000-0000-0000-0000-0000-0000-0000",
      new_password: "a brand new secret",
    };
    for (let i = 0; i < 3; i++) expectProblem(await app.redeem(wrong), 400, "invalid_reset_code");
    const blocked = await app.redeem(wrong);
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expectProblem(await app.redeem({ ...wrong, reset_code: code }), 429, "too_many_requests");
    // Logins have their own count: the account's owner can still log in.
    expect((await app.login("ann", ann.password)).status).toBe(200);
  });

  test("ten redemptions of one code at once: exactly one 200, nine 400 invalid_reset_code", async () => {
    // Attempts are reserved against the throttle while they run: room for all ten.
    const app = await adminApp({
      loginThrottle: {
        maxFailures: 20,
        backoffBaseMs: 1000,
        backoffMaxMs: 1000,
        clientMaxFailures: 100,
        clientWindowMs: 60_000,
      },
    });
    const ann = await app.signUp("ann");
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        app.redeem({ username: "ann", reset_code: code, new_password: `a brand new secret ${i}` }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectProblem(r, 400, "invalid_reset_code");
    const winner = replies.find((r) => r.status === 200)!;
    const sessions = await app.call("GET", `${AUTH}/sessions`, { token: winner.body.token });
    expect(sessions.body).toHaveLength(1);
  });

  test("issuing for an unknown or malformed id: 404 not_found", async () => {
    const app = await adminApp();
    expectProblem(await app.issue(Bun.randomUUIDv7()), 404, "not_found");
    expectProblem(await app.issue("nope"), 404, "not_found");
  });
});

describe("the audit log", () => {
  test("records who did what, from where, with which request; newest first; never a secret", async () => {
    const app = await adminApp({
      sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 7200, reuseWindowMs: 0 },
      loginThrottle: blockAfter(2),
    });
    const ann = await app.signUp("ann");
    const rid = { "x-request-id": "req-ann-1" };
    // A failed login, then a block (recorded once, however often it is hit).
    for (let i = 0; i < 4; i++)
      await app.call("POST", `${AUTH}/login`, { body: { username: "ann", password: "nope" } });
    await app.store.throttle.clear(`user:${ann.user.id}`);
    const changed = await app.call("PUT", "/svc-api/v1/users/password", {
      token: ann.token,
      body: { current_password: ann.password, new_password: "another fine secret" },
      headers: rid,
    });
    expect(changed.status).toBe(200);
    await app.call("POST", `${AUTH}/refresh`, { body: { refresh_token: changed.body.refresh_token } });
    await app.call("POST", `${AUTH}/refresh`, { body: { refresh_token: changed.body.refresh_token } });
    const again = await app.login("ann", "another fine secret");
    await app.call("POST", `${AUTH}/logout`, { token: again.body.token, body: { scope: "global" } });
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const redeemed = await app.redeem({ username: "ann", reset_code: code, new_password: "the newest secret" });
    const book = await app.graphql(`mutation { createCategory(input: { name: "Books" }) { id } }`, {
      token: redeemed.body.token,
    });
    const bookId = book.body.data.createCategory.id;
    await app.graphql(`mutation { deleteCategory(id: "${bookId}") }`, { token: app.root.token });
    await app.patch(ann.user.id, { role: "admin" });
    await app.call("DELETE", `${ADMIN}/users/${ann.user.id}`, { token: app.root.token });
    const bob = await app.signUp("bob");
    await app.call("DELETE", "/svc-api/v1/users", { token: bob.token });

    const events = await app.audit("?limit=1000");
    const actions = events.map((e) => e.action).reverse();
    expect(actions).toEqual([
      "user.created", // root
      "login.succeeded",
      "admin.user.updated", // root made an admin
      "user.created", // ann
      "login.succeeded",
      "login.failed",
      "login.failed",
      "login.throttled",
      "password.changed",
      "refresh.reuse_detected",
      "login.succeeded",
      "session.revoked",
      "password_reset.issued",
      "password_reset.redeemed",
      "category.deleted",
      "admin.user.updated",
      "admin.user.deleted",
      "user.created", // bob
      "login.succeeded",
      "user.deleted",
    ]);
    const changedEvent = events.find((e) => e.action === "password.changed")!;
    expect(changedEvent).toMatchObject({
      actor_id: ann.user.id,
      target_id: ann.user.id,
      request_id: expect.stringMatching(UUID),
      outcome: "success",
      client_address: expect.any(String),
      detail: { client_request_id: "req-ann-1" },
    });
    expect(events.find((e) => e.action === "login.failed")).toMatchObject({
      actor_id: null,
      target_id: ann.user.id,
      outcome: "failure",
      detail: { reason: "wrong_password" },
    });
    expect(events.find((e) => e.action === "category.deleted")).toMatchObject({
      actor_id: app.root.user.id,
      target_id: bookId,
      detail: { name: "Books", created_by: ann.user.id },
    });
    expect(events.find((e) => e.action === "admin.user.updated")).toMatchObject({
      actor_id: app.root.user.id,
      target_id: ann.user.id,
      detail: { role: "admin" },
    });
    const text = JSON.stringify(events);
    for (const secret of [
      ann.password,
      "another fine secret",
      "the newest secret",
      code,
      changed.body.refresh_token,
      ann.token,
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain("argon2");
  });

  test("refused reset codes are recorded as password_reset.failed with their reason, never the code", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const replaced = (await app.issue(ann.user.id)).body.reset_code;
    const code = (await app.issue(ann.user.id)).body.reset_code;
    const tryCode = (username: string, reset_code: string) =>
      app.redeem({ username, reset_code, new_password: "a brand new secret" });
    expectProblem(await tryCode("ann", replaced), 400, "invalid_reset_code");
    expectProblem(await tryCode("ann", "not a code"), 400, "invalid_reset_code");
    expectProblem(await tryCode("nobody", code), 400, "invalid_reset_code");
    expect((await tryCode("ann", code)).status).toBe(200);
    expectProblem(await tryCode("ann", code), 400, "invalid_reset_code"); // spent
    const late = (await app.issue(ann.user.id)).body.reset_code;
    await app.patch(ann.user.id, { status: "disabled" });
    expectProblem(await tryCode("ann", late), 403, "account_disabled");

    const failed = (await app.audit("?action=password_reset.failed")).reverse();
    expect(failed.map((e) => [e.target_id, e.detail])).toEqual([
      [ann.user.id, { reason: "invalid_code" }],
      [ann.user.id, { reason: "malformed_code" }],
      [null, { reason: "unknown_account" }],
      [ann.user.id, { reason: "invalid_code" }],
      [ann.user.id, { reason: "account_disabled" }],
    ]);
    for (const event of failed) {
      expect(event).toMatchObject({ actor_id: null, outcome: "failure", request_id: expect.stringMatching(UUID) });
      expect(event.client_address).toEqual(expect.any(String));
    }
    const text = JSON.stringify(await app.audit("?limit=1000"));
    for (const secret of [replaced, code, late, "a brand new secret"]) expect(text).not.toContain(secret);
  });

  test("a block of reset attempts is recorded once as password_reset.throttled, not as a login's", async () => {
    const app = await adminApp({
      loginThrottle: blockAfter(2),
    });
    const ann = await app.signUp("ann");
    const wrong = {
      username: "ann",
      reset_code: "0000-0000-0000-0000-0000-0000-0000-0000",
      new_password: "a brand new secret",
    };
    for (let i = 0; i < 2; i++) expectProblem(await app.redeem(wrong), 400, "invalid_reset_code");
    for (let i = 0; i < 3; i++) expectProblem(await app.redeem(wrong), 429, "too_many_requests");

    const actions = (await app.audit(`?target=${ann.user.id}`)).map((e) => e.action).reverse();
    expect(actions).toEqual([
      "user.created",
      "login.succeeded",
      "password_reset.failed",
      "password_reset.failed",
      "password_reset.throttled",
    ]);
    expect((await app.audit("?action=password_reset.throttled"))[0]).toMatchObject({
      target_id: ann.user.id,
      outcome: "failure",
      detail: { retry_after_s: 60 },
    });
    expect(await app.audit("?action=login.throttled")).toEqual([]);
  });

  test("records svc's own request id; a client's X-Request-Id only beside it, and only when sane", async () => {
    const app = await adminApp();
    const signUp = (username: string, requestId: string) =>
      app.call("POST", "/svc-api/v1/users/create", {
        body: { username, email: `${username}@example.com`, password: "correct horse battery" },
        headers: { "x-request-id": requestId },
      });
    /** The user.created event of the account a sign-up answered. */
    const created = async (reply: { body: { id: string } }) =>
      (await app.audit("?action=user.created")).find((e) => e.target_id === reply.body.id)!;
    // The same id twice: two requests still have two ids.
    const first = await signUp("ann", "client-1");
    const second = await signUp("bob", "client-1");
    expect(first.headers.get("x-request-id")).toBe("client-1");
    const annEvent = await created(first);
    const bobEvent = await created(second);
    for (const event of [annEvent, bobEvent]) {
      expect(event.request_id).toMatch(UUID);
      expect(event.detail).toEqual({ role: "user", client_request_id: "client-1" });
    }
    expect(annEvent.request_id).not.toBe(bobEvent.request_id);
    expect(second.status).toBe(201);
    // Its log lines carry both ids.
    const lines = (await app.logs()).map((line) => JSON.parse(line));
    const completed = lines.filter((l) => l.msg === "request completed" && l.request_id === annEvent.request_id);
    expect(completed).toEqual([expect.objectContaining({ client_request_id: "client-1", status: 201 })]);

    // Too long, or not letters, digits and ._:- : dropped, and the answer carries svc's own id.
    for (const [username, requestId] of [
      ["cyd", "a".repeat(129)],
      ["dee", "a b"],
      ["eve", 'x"y'],
      ["fay", "caf\u00e9"],
    ] as const) {
      const reply = await signUp(username, requestId);
      expect(reply.status).toBe(201);
      const event = await created(reply);
      expect(event.detail).toEqual({ role: "user" });
      expect(reply.headers.get("x-request-id")).toBe(event.request_id as string);
    }

    // GraphQL's events alike.
    const book = await app.graphql(`mutation { createCategory(input: { name: "Books" }) { id } }`, {
      token: app.root.token,
    });
    await app.call("POST", "/graphql", {
      body: { query: `mutation { deleteCategory(id: "${book.body.data.createCategory.id}") }` },
      token: app.root.token,
      headers: { "x-request-id": "gql-1" },
    });
    expect((await app.audit("?action=category.deleted"))[0]).toMatchObject({
      request_id: expect.stringMatching(UUID),
      detail: { name: "Books", client_request_id: "gql-1" },
    });
  });

  test("filters by action, actor, target and since (a time or a duration), pages with Link", async () => {
    const app = await adminApp();
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    await app.patch(ann.user.id, { role: "admin" });
    const only = async (query: string) => (await app.audit(query)).map((e) => `${e.action} ${e.target_id}`);
    expect(await only("?action=admin.user.updated")).toEqual([
      `admin.user.updated ${ann.user.id}`,
      `admin.user.updated ${app.root.user.id}`,
    ]);
    expect(await only(`?actor=${app.root.user.id}&action=admin.user.updated`)).toHaveLength(1);
    expect(await only(`?target=${bob.user.id}`)).toEqual([
      `login.succeeded ${bob.user.id}`,
      `user.created ${bob.user.id}`,
    ]);
    // user: as actor or as target.
    expect(await only(`?user=${app.root.user.id}`)).toEqual([
      `admin.user.updated ${ann.user.id}`,
      `admin.user.updated ${app.root.user.id}`,
      `login.succeeded ${app.root.user.id}`,
      `user.created ${app.root.user.id}`,
    ]);
    expect(await only("?since=1h")).toHaveLength(8);
    expect(await only(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    const first = await app.call("GET", `${ADMIN}/audit?limit=2&action=login.succeeded`, { token: app.root.token });
    expect(first.body.map((e: { target_id: string }) => e.target_id)).toEqual([bob.user.id, ann.user.id]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link") ?? "")?.[1];
    expect(next).toBe(`${ADMIN}/audit?action=login.succeeded&limit=2&after=${first.body[1].id}`);
    const last = await app.call("GET", next!, { token: app.root.token });
    expect(last.body.map((e: { target_id: string }) => e.target_id)).toEqual([app.root.user.id]);
    expect(last.headers.get("link")).toBeNull();
  });

  test("bad filters: 400 validation_failed naming each", async () => {
    const app = await adminApp();
    const bad = async (query: string, fields: string[]) => {
      const reply = await app.call("GET", `${ADMIN}/audit${query}`, { token: app.root.token });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
    };
    await bad("?action=user.hacked", ["action"]);
    await bad("?actor=ann", ["actor"]);
    await bad("?target=1", ["target"]);
    await bad("?since=yesterday", ["since"]);
    await bad("?since=2026-13-45T00:00:00Z", ["since"]);
    // Further back than any date: a duration that once made an Invalid Date (a 500).
    await bad("?since=9999999999999s", ["since"]);
    await bad("?since=9999999999999d", ["since"]);
    await bad("?since=99999999999999d", ["since"]);
    await bad("?limit=0&after=x", ["limit", "after"]);
    await bad("?user=x", ["user"]);
    await bad("?who=x", ["who"]);
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
