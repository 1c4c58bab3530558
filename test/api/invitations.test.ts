// Sign-up by invitation through REST (SVC_SIGNUP=invite): administrators issue, list and revoke codes
// (admin/invitations); users/create needs one, and spends it in the same change as the account. Every
// code that cannot be used gets one answer. On SQLite, and on PostgreSQL with TEST_DATABASE=postgres.
import { describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import { canonicalInvitationCode, invitationDigest, newInvitationCode } from "../../src/signup/codes.ts";
import { expectProblem, promote, testApp, type ConfigOverrides } from "../helpers.ts";

const CREATE = "/svc-api/v1/users/create";
const INVITATIONS = "/svc-api/v1/admin/invitations";
const PASSWORD = "correct horse battery";
const CODE_FORMAT = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const INVALID =
  "The invitation is not one that can be used: wrong, used, expired or revoked, or for another e-mail address. Ask for a new one.";

const account = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  email: `${username.toLowerCase()}@example.com`,
  password: PASSWORD,
  ...extra,
});

/** An app whose sign-up is by invitation, with an administrator (`root`, made while it was open). */
async function inviteApp(config: ConfigOverrides = {}) {
  const open = await testApp({ config });
  const root = await open.signUp("root");
  await promote(open.store, root.user.id);
  const app = await testApp({ on: open.store, config: { ...config, signup: { mode: "invite", ...config.signup } } });
  const issue = (body?: unknown, token = root.token) => app.call("POST", INVITATIONS, { token, body });
  /** A fresh invitation's code (and id). */
  const invite = async (body: unknown = {}) => {
    const reply = await issue(body);
    expect(reply.status).toBe(201);
    return reply.body as { id: string; code: string; email: string | null; expires_at: string };
  };
  const signUp = (name: string, invitation?: unknown, extra: Record<string, unknown> = {}) =>
    app.call("POST", CREATE, { body: account(name, { ...(invitation !== undefined && { invitation }), ...extra }) });
  const list = async (query = "") => {
    const reply = await app.call("GET", `${INVITATIONS}${query}`, { token: root.token });
    expect(reply.status).toBe(200);
    return reply;
  };
  const audit = async (action: string) =>
    (await app.call("GET", `/svc-api/v1/admin/audit?action=${action}`, { token: root.token })).body as Array<
      Record<string, unknown>
    >;
  const exists = async (username: string) => (await app.store.users.findByLogin(username)) !== null;
  return { ...app, root, issue, invite, signUp, list, audit, exists };
}

describe("issuing: POST admin/invitations", () => {
  test("201: the code (shown once, not stored), its id, e-mail and expiry; SVC_INVITATION_TTL when none is named", async () => {
    const app = await inviteApp({ signup: { invitationTtlSeconds: 3 * 86400 } });
    const before = Date.now();
    const reply = await app.issue();
    expect(reply.status).toBe(201);
    expect(reply.headers.get("cache-control")).toBe("no-store");
    expect(reply.body).toEqual({
      id: expect.stringMatching(UUID),
      code: expect.stringMatching(CODE_FORMAT),
      email: null,
      expires_at: expect.any(String),
    });
    const lifetime = Date.parse(reply.body.expires_at) - before;
    expect(lifetime).toBeGreaterThanOrEqual(3 * 86_400_000);
    expect(lifetime).toBeLessThan(3 * 86_400_000 + 60_000);
    // Only the digest is kept: the code is nowhere in the database's row.
    const rows = await app.store.invitations.list({ limit: 10 });
    expect(JSON.stringify(rows)).not.toContain(reply.body.code);

    const forAnn = await app.issue({ email: "Ann@Example.com", expires_in: "2h" });
    expect(forAnn.body.email).toBe("ann@example.com");
    const hours = (Date.parse(forAnn.body.expires_at) - before) / 3_600_000;
    expect(hours).toBeGreaterThanOrEqual(2);
    expect(hours).toBeLessThan(2.1);
    // No body at all is an invitation for anyone, too.
    expect((await app.call("POST", INVITATIONS, { token: app.root.token })).status).toBe(201);
  });

  test("bad fields: 400 validation_failed naming each; nothing is issued", async () => {
    const app = await inviteApp();
    const bad = async (body: unknown, fields: string[]) => {
      const reply = await app.issue(body);
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(fields);
    };
    await bad({ email: "nobody" }, ["email"]);
    await bad({ expires_in: "forever" }, ["expires_in"]);
    await bad({ expires_in: "30s" }, ["expires_in"]);
    await bad({ expires_in: "366d" }, ["expires_in"]);
    await bad({ expires_in: 7 }, ["expires_in"]);
    await bad({ code: "MINE-1234" }, ["code"]);
    expectProblem(
      await app.call("POST", INVITATIONS, {
        token: app.root.token,
        raw: "{",
        headers: { "content-type": "application/json" },
      }),
      400,
      "malformed_json",
    );
    expect((await app.list()).body).toEqual([]);
  });

  test("every invitation route: 401 without a token, 403 forbidden with a user's; nothing changes", async () => {
    const app = await inviteApp();
    const made = await app.invite();
    const ann = await app.signUp("ann", made.code);
    expect(ann.status).toBe(201);
    const token = (await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: PASSWORD } }))
      .body.token;
    const routes: Array<[string, string, unknown?]> = [
      ["POST", INVITATIONS, {}],
      ["GET", INVITATIONS],
      ["GET", `${INVITATIONS}?limit=nonsense`],
      ["DELETE", `${INVITATIONS}/${made.id}`],
    ];
    for (const [method, path, body] of routes) {
      expectProblem(await app.call(method, path, { body }), 401, "unauthorized");
      expectProblem(await app.call(method, path, { body, token }), 403, "forbidden");
    }
    expect((await app.list()).body.map((i: { id: string }) => i.id)).toEqual([made.id]);
  });
});

describe("signing up by invitation: users/create", () => {
  test("with a good code: 201, the account, and the invitation marked used by it; any spelling of the code does", async () => {
    const app = await inviteApp();
    const made = await app.invite();
    // As a person types it back: lower case, no dashes, O for 0 and I for 1.
    const typed = made.code.toLowerCase().replaceAll("-", " ").replaceAll("0", "o").replaceAll("1", "i");
    const reply = await app.signUp("ann", typed);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ username: "ann", email: "ann@example.com", role: "user" });
    expect(reply.headers.get("location")).toBe(`/svc-api/v1/users/${reply.body.id}`);
    const [listed] = (await app.list()).body;
    expect(listed).toEqual({
      id: made.id,
      email: null,
      created_by: app.root.user.id,
      created_at: expect.any(String),
      expires_at: made.expires_at,
      used_at: reply.body.created_at,
      used_by: reply.body.id,
    });
  });

  test("missing: 403 invitation_required; nothing is created", async () => {
    const app = await inviteApp();
    const reply = await app.signUp("ann");
    expectProblem(reply, 403, "invitation_required");
    expect(reply.body.detail).toBe("Sign-up is by invitation: send the code an administrator gave you as invitation.");
    expect(await app.exists("ann")).toBe(false);
  });

  test("unknown, malformed, used, expired, revoked or for another address: one answer, 403 invalid_invitation", async () => {
    const app = await inviteApp();
    const used = await app.invite();
    expect((await app.signUp("first", used.code)).status).toBe(201);
    const revoked = await app.invite();
    expect((await app.call("DELETE", `${INVITATIONS}/${revoked.id}`, { token: app.root.token })).status).toBe(204);
    const forBob = await app.invite({ email: "bob@example.com" });
    // Expired a minute ago: written as issuing would have, with its expiry in the past.
    const expired = newInvitationCode();
    const past = Date.now() - 60_000;
    await app.store.invitations.issue(
      {
        id: Bun.randomUUIDv7(),
        digest: invitationDigest(canonicalInvitationCode(expired)!),
        email: null,
        createdBy: app.root.user.id,
        createdAt: new Date(past - 86_400_000).toISOString(),
        expiresAt: new Date(past).toISOString(),
      },
      auditEvent("invitation.issued", { actor: app.root.user.id, origin: { address: null, requestId: null } }),
    );
    const codes = {
      unknown: newInvitationCode(),
      malformed: "ABCD-EFGH",
      empty: "",
      used: used.code,
      expired,
      revoked: revoked.code,
      "for another address": forBob.code,
    };
    const answers = new Set<string>();
    for (const [what, code] of Object.entries(codes)) {
      const reply = await app.signUp("ann", code);
      expect({ what, status: reply.status, code: reply.body.code }).toEqual({
        what,
        status: 403,
        code: "invalid_invitation",
      });
      expectProblem(reply, 403, "invalid_invitation");
      answers.add(reply.text);
    }
    // The same body, word for word, whatever is wrong with the code.
    expect([...answers]).toEqual([
      JSON.stringify({
        type: "about:blank",
        title: "Invalid invitation",
        status: 403,
        detail: INVALID,
        code: "invalid_invitation",
      }),
    ]);
    expect(await app.exists("ann")).toBe(false);
    // The address it is for may use it, in any case.
    expect((await app.signUp("bob", forBob.code, { email: "BOB@example.com" })).status).toBe(201);
  });

  test("a bad invitation field is 400 validation_failed; the account's own problems come before the code's, and spend nothing", async () => {
    const app = await inviteApp();
    const made = await app.invite();
    const bad = async (reply: Awaited<ReturnType<typeof app.signUp>>, field: string) => {
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    };
    await bad(await app.signUp("ann", 12345), "invitation");
    await bad(await app.signUp("ann", "A".repeat(129)), "invitation");
    await bad(await app.signUp("ann", made.code, { password: "password" }), "password");
    await bad(await app.signUp("a", "not a code"), "username");
    // A taken name with a good code: 409, and the code still works for someone else.
    expectProblem(await app.signUp("root", made.code, { email: "new@example.com" }), 409, "username_taken");
    expect((await app.signUp("ann", made.code)).status).toBe(201);
  });

  test("two sign-ups with one code at once: exactly one 201, the other 403 invalid_invitation", async () => {
    const app = await inviteApp();
    const made = await app.invite();
    const replies = await Promise.all(["ann", "bob"].map((name) => app.signUp(name, made.code)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 403]);
    expectProblem(replies.find((r) => r.status === 403)!, 403, "invalid_invitation");
    expect([await app.exists("ann"), await app.exists("bob")].filter(Boolean)).toHaveLength(1);
  });
});

describe("listing and revoking: GET and DELETE admin/invitations", () => {
  test("the list never shows a code; newest first, a page at a time (Link)", async () => {
    const app = await inviteApp();
    const made = [await app.invite(), await app.invite({ email: "cy@example.com" }), await app.invite()];
    const all = await app.list();
    expect(all.body.map((i: { id: string }) => i.id)).toEqual(made.map((m) => m.id).reverse());
    for (const { code } of made) expect(all.text).not.toContain(code);
    expect(all.text).not.toContain(made[0]!.code.replaceAll("-", ""));
    for (const row of all.body)
      expect(Object.keys(row).sort()).toEqual([
        "created_at",
        "created_by",
        "email",
        "expires_at",
        "id",
        "used_at",
        "used_by",
      ]);
    const first = await app.list("?limit=2");
    expect(first.body.map((i: { id: string }) => i.id)).toEqual([made[2]!.id, made[1]!.id]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link") ?? "")?.[1];
    expect(next).toBe(`${INVITATIONS}?limit=2&after=${made[1]!.id}`);
    const second = await app.call("GET", next!, { token: app.root.token });
    expect(second.body.map((i: { id: string }) => i.id)).toEqual([made[0]!.id]);
    expect(second.headers.get("link")).toBeNull();
    const bad = async (query: string, errors: Array<{ field: string; message: string }>) => {
      const reply = await app.call("GET", `${INVITATIONS}${query}`, { token: app.root.token });
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors).toEqual(errors);
    };
    await bad("?sort=new", [{ field: "sort", message: "is not a known field" }]);
    await bad("?limit=0&after=x", [
      { field: "limit", message: "must be an integer from 1 to 1000" },
      { field: "after", message: "must be an invitation id" },
    ]);
  });

  test("revoking: 204, then the code is refused; again, or an unknown id, 404 not_found", async () => {
    const app = await inviteApp();
    const made = await app.invite();
    const revoke = (id: string) => app.call("DELETE", `${INVITATIONS}/${id}`, { token: app.root.token });
    expect((await revoke(made.id)).status).toBe(204);
    expectProblem(await app.signUp("ann", made.code), 403, "invalid_invitation");
    expectProblem(await revoke(made.id), 404, "not_found");
    expectProblem(await revoke("not-an-id"), 404, "not_found");
    expectProblem(await revoke(Bun.randomUUIDv7()), 404, "not_found");
    // A redeemed one leaves the list; its account stays.
    const used = await app.invite();
    expect((await app.signUp("bob", used.code)).status).toBe(201);
    expect((await revoke(used.id.toUpperCase())).status).toBe(204);
    expect((await app.list()).body).toEqual([]);
    expect(await app.exists("bob")).toBe(true);
  });

  test("audited: issued and revoked by the administrator, redeemed by the new account, which is created by itself", async () => {
    const app = await inviteApp();
    const made = await app.invite({ email: "ann@example.com", expires_in: "1d" });
    const ann = await app.signUp("ann", made.code);
    const other = await app.invite();
    await app.call("DELETE", `${INVITATIONS}/${other.id}`, { token: app.root.token });
    const root = app.root.user.id;
    expect(await app.audit("invitation.issued")).toMatchObject([
      {
        actor_id: root,
        target_id: other.id,
        outcome: "success",
        detail: { email: null, expires_at: other.expires_at },
      },
      {
        actor_id: root,
        target_id: made.id,
        outcome: "success",
        detail: { email: "ann@example.com", expires_at: made.expires_at },
      },
    ]);
    expect(await app.audit("invitation.redeemed")).toMatchObject([
      { actor_id: ann.body.id, target_id: made.id, outcome: "success" },
    ]);
    expect(await app.audit("invitation.revoked")).toMatchObject([{ actor_id: root, target_id: other.id }]);
    const created = (await app.audit("user.created")).find((e) => e.target_id === ann.body.id);
    expect(created).toMatchObject({ actor_id: ann.body.id, detail: { role: "user" } });
    // No code is ever written to the log.
    const log = JSON.stringify(
      (await app.call("GET", "/svc-api/v1/admin/audit?limit=1000", { token: app.root.token })).body,
    );
    for (const code of [made.code, other.code]) expect(log).not.toContain(code);
  });
});
