// The audit log through the public surface: what is recorded, and reading it as an administrator.
import { describe, expect, test } from "bun:test";
import { blockAfter, expectProblem } from "../helpers.ts";
import { ADMIN, AUTH, UUID, adminApp } from "../support/admin.ts";

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
      "email_verification.sent",
      "login.succeeded",
      "admin.user.updated", // root made an admin
      "user.created", // ann
      "email_verification.sent",
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
      "email_verification.sent",
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
      "email_verification.sent",
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
      `email_verification.sent ${bob.user.id}`,
      `user.created ${bob.user.id}`,
    ]);
    // user: as actor or as target.
    expect(await only(`?user=${app.root.user.id}`)).toEqual([
      `admin.user.updated ${ann.user.id}`,
      `admin.user.updated ${app.root.user.id}`,
      `login.succeeded ${app.root.user.id}`,
      `email_verification.sent ${app.root.user.id}`,
      `user.created ${app.root.user.id}`,
    ]);
    expect(await only("?since=1h")).toHaveLength(11);
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
