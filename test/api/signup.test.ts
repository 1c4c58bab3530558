// Sign-up control through REST (SVC_SIGNUP open, invite or closed; the invitations themselves are
// invitations.test.ts's): closed refuses every sign-up and creates nothing while administrators still make
// accounts (admin/users); and in every mode, at most SVC_SIGNUP_CLIENT_MAX sign-up attempts per client
// and window. On SQLite, and on PostgreSQL with TEST_DATABASE=postgres.
import { describe, expect, test } from "bun:test";
import type { Config } from "../../src/config/index.ts";
import { expectProblem, promote, testApp, type ConfigOverrides } from "../helpers.ts";

const CREATE = "/svc-api/v1/users/create";
const ADMIN_USERS = "/svc-api/v1/admin/users";
const PASSWORD = "correct horse battery";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const account = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  email: `${username.toLowerCase()}@example.com`,
  password: PASSWORD,
  ...extra,
});

/**
 * An app in `mode` with an administrator, `root`, made while sign-up was open: a second app (another
 * instance, as an operator's restart with SVC_SIGNUP changed) on the same database.
 */
async function appIn(mode: Config["signup"]["mode"], config: ConfigOverrides = {}) {
  const open = await testApp({ config });
  const root = await open.signUp("root");
  await promote(open.store, root.user.id);
  const app = await testApp({ on: open.store, config: { ...config, signup: { ...config.signup, mode } } });
  /** Every account, as an administrator lists them. */
  const usernames = async () =>
    (
      (await app.call("GET", `${ADMIN_USERS}?limit=1000`, { token: root.token })).body as Array<{ username: string }>
    ).map((u) => u.username);
  return { ...app, root, usernames };
}

describe("SVC_SIGNUP=open (the default)", () => {
  test("anyone signs up: 201 and the account; an invitation sent along is ignored", async () => {
    const app = await appIn("open");
    const ann = await app.call("POST", CREATE, { body: account("ann") });
    expect(ann.status).toBe(201);
    expect(ann.body).toMatchObject({ username: "ann", email: "ann@example.com", role: "user" });
    const bob = await app.call("POST", CREATE, { body: account("bob", { invitation: "not a code at all" }) });
    expect(bob.status).toBe(201);
    expect(await app.usernames()).toEqual(["root", "ann", "bob"]);
  });
});

describe("SVC_SIGNUP=closed", () => {
  test("users/create answers 403 signup_closed to every request, whatever its body, and creates nothing", async () => {
    const app = await appIn("closed");
    const bodies: Array<{ body?: unknown; raw?: string; headers?: Record<string, string> }> = [
      { body: account("ann") },
      { body: account("bob", { invitation: "ABCD" }) },
      { body: { username: "x" } },
      { body: account("root") },
      { raw: "{", headers: { "content-type": "application/json" } },
      { raw: "ann", headers: { "content-type": "text/plain" } },
      {},
    ];
    for (const request of bodies) {
      const reply = await app.call("POST", CREATE, request);
      expectProblem(reply, 403, "signup_closed");
      expect(reply.body.detail).toBe("Sign-up is closed: an administrator creates accounts.");
    }
    expect(await app.usernames()).toEqual(["root"]);
    const created = (await app.call("GET", "/svc-api/v1/admin/audit?action=user.created", { token: app.root.token }))
      .body;
    expect(created).toHaveLength(1);
  });
});

describe("POST admin/users: administrators create accounts, whatever SVC_SIGNUP says", () => {
  test("201 with the account (AdminUser) and its Location, of either role; it logs in; audited as admin.user.created", async () => {
    const app = await appIn("closed");
    const made = await app.call("POST", ADMIN_USERS, { token: app.root.token, body: account("Ann") });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(UUID),
      username: "Ann",
      email: "ann@example.com",
      email_verified: false,
      email_verified_at: null,
      role: "user",
      status: "active",
      last_login_at: null,
      created_at: expect.any(String),
      updated_at: made.body.created_at,
    });
    expect(made.headers.get("location")).toBe(`${ADMIN_USERS}/${made.body.id}`);
    const admin = await app.call("POST", ADMIN_USERS, {
      token: app.root.token,
      body: account("boss", { role: "admin" }),
    });
    expect(admin.body.role).toBe("admin");
    const login = await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ id: made.body.id, role: "user" });
    const events = (
      await app.call("GET", "/svc-api/v1/admin/audit?action=admin.user.created", { token: app.root.token })
    ).body;
    expect(events).toMatchObject([
      { actor_id: app.root.user.id, target_id: admin.body.id, outcome: "success", detail: { role: "admin" } },
      { actor_id: app.root.user.id, target_id: made.body.id, outcome: "success", detail: { role: "user" } },
    ]);
    expect(await app.usernames()).toEqual(["root", "Ann", "boss"]);
  });

  test("sign-up's rules hold: each bad field 400 validation_failed naming it, a taken name or e-mail 409", async () => {
    const app = await appIn("open");
    const create = (body: unknown) => app.call("POST", ADMIN_USERS, { token: app.root.token, body });
    const fields = async (body: unknown, names: string[]) => {
      const reply = await create(body);
      expectProblem(reply, 400, "validation_failed");
      expect(reply.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(names);
    };
    await fields({ username: "ann", email: "ann@example.com" }, ["password"]);
    await fields(account("a"), ["username"]);
    await fields(account("ann", { email: "nobody" }), ["email"]);
    await fields(account("ann", { password: "short" }), ["password"]);
    await fields(account("ann", { password: "password" }), ["password"]);
    await fields(account("ann", { role: "root" }), ["role"]);
    await fields(account("ann", { invitation: "ABCD" }), ["invitation"]);
    expectProblem(await create(account("ROOT", { email: "new@example.com" })), 409, "username_taken");
    expectProblem(await create(account("other", { email: "ROOT@example.com" })), 409, "email_taken");
    expectProblem(
      await app.call("POST", ADMIN_USERS, {
        token: app.root.token,
        raw: "{",
        headers: { "content-type": "application/json" },
      }),
      400,
      "malformed_json",
    );
    expectProblem(
      await app.call("POST", ADMIN_USERS, {
        token: app.root.token,
        raw: "x",
        headers: { "content-type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    expect(await app.usernames()).toEqual(["root"]);
  });

  test("401 without a token, 403 forbidden with a user's; nothing is created", async () => {
    const app = await appIn("open");
    const ann = await app.signUp("ann");
    expectProblem(await app.call("POST", ADMIN_USERS, { body: account("eve") }), 401, "unauthorized");
    expectProblem(await app.call("POST", ADMIN_USERS, { token: ann.token, body: account("eve") }), 403, "forbidden");
    expect(await app.usernames()).toEqual(["root", "ann"]);
  });
});

describe("at most SVC_SIGNUP_CLIENT_MAX sign-up attempts per client and SVC_SIGNUP_CLIENT_WINDOW", () => {
  const throttled: ConfigOverrides = { trustProxy: 1, signup: { clientMax: 30, clientWindowMs: 3_600_000 } };
  const from = (address: string) => ({ "x-forwarded-for": address });

  test("an IPv6 client is its /64: addresses of one network share the count", async () => {
    const app = await appIn("open", { trustProxy: 1, signup: { clientMax: 2, clientWindowMs: 3_600_000 } });
    // One host may hold every address of its /64; a new one per request must not buy a new allowance.
    for (const [i, address] of ["2001:db8:1:2::1", "2001:db8:1:2:ffff::9"].entries()) {
      expect((await app.call("POST", CREATE, { body: account(`six${i}`), headers: from(address) })).status).toBe(201);
    }
    const third = await app.call("POST", CREATE, { body: account("six2"), headers: from("2001:0db8:0001:0002::abcd") });
    expectProblem(third, 429, "too_many_requests");
    // The next /64 is another client; so is an IPv4 address.
    expect((await app.call("POST", CREATE, { body: account("six3"), headers: from("2001:db8:1:3::1") })).status).toBe(
      201,
    );
  });

  test("the 31st attempt from one address is 429 with Retry-After, whatever the first 30 got; another address goes on", async () => {
    const app = await appIn("open", throttled);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      // Accounts made, names taken and bad bodies alike: attempts are counted, not outcomes.
      const body =
        i % 3 === 0
          ? account(`user${i}`)
          : i % 3 === 1
            ? account("root", { email: `r${i}@example.com` })
            : { username: "x" };
      statuses.push((await app.call("POST", CREATE, { body, headers: from("203.0.113.7") })).status);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(10);
    expect(statuses.filter((s) => s === 400)).toHaveLength(10);
    const refused = await app.call("POST", CREATE, { body: account("late"), headers: from("203.0.113.7") });
    expectProblem(refused, 429, "too_many_requests");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.body.detail).toBe(`Too many sign-ups from this address; try again in ${retryAfter} s.`);
    // Refused before its body is read: even a malformed one gets the 429, and nothing is created.
    expectProblem(
      await app.call("POST", CREATE, {
        raw: "{",
        headers: { ...from("203.0.113.7"), "content-type": "application/json" },
      }),
      429,
      "too_many_requests",
    );
    expect(await app.usernames()).not.toContain("late");
    // Another client is counted apart.
    expect((await app.call("POST", CREATE, { body: account("other"), headers: from("198.51.100.4") })).status).toBe(
      201,
    );
    // The proxy's own address is not the client: the header names it (SVC_TRUST_PROXY=1).
    const viaProxy = { "x-forwarded-for": "198.51.100.5, 203.0.113.7" };
    expectProblem(
      await app.call("POST", CREATE, { body: account("spoof"), headers: viaProxy }),
      429,
      "too_many_requests",
    );
  });

  test("counts in every mode: closed and invite refusals count too", async () => {
    for (const mode of ["closed", "invite"] as const) {
      const app = await appIn(mode, { trustProxy: 1, signup: { clientMax: 2 } });
      const expected = mode === "closed" ? "signup_closed" : "invitation_required";
      for (let i = 0; i < 2; i++)
        expectProblem(
          await app.call("POST", CREATE, { body: account("ann"), headers: from("203.0.113.8") }),
          403,
          expected,
        );
      expectProblem(
        await app.call("POST", CREATE, { body: account("ann"), headers: from("203.0.113.8") }),
        429,
        "too_many_requests",
      );
    }
  });

  test("administrators creating accounts are not held to it", async () => {
    const app = await appIn("open", { trustProxy: 1, signup: { clientMax: 1 } });
    expect((await app.call("POST", CREATE, { body: account("ann"), headers: from("203.0.113.9") })).status).toBe(201);
    expectProblem(
      await app.call("POST", CREATE, { body: account("bob"), headers: from("203.0.113.9") }),
      429,
      "too_many_requests",
    );
    for (const name of ["bob", "cyd", "dan"]) {
      const made = await app.call("POST", ADMIN_USERS, {
        token: app.root.token,
        body: account(name),
        headers: from("203.0.113.9"),
      });
      expect(made.status).toBe(201);
    }
  });
});
