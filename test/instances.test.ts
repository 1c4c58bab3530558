// Two instances of svc on one PostgreSQL database, each with its own pool, as behind a load balancer:
// administration, invitations, Idempotency-Key, ETags and migrations.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import journal from "../drizzle/postgres/meta/_journal.json";
import { expectProblem, testApp, promote } from "./helpers.ts";
import { postgresAvailable } from "./postgres.ts";
import { closeInstances, type Instances, openInstances } from "./support/instances.ts";

const available = await postgresAvailable();

describe.skipIf(!available)("two instances on one PostgreSQL database", () => {
  let { database, stores, a, b, heard } = {} as Instances;
  beforeAll(async () => {
    ({ database, stores, a, b, heard } = await openInstances("instances"));
  });
  afterAll(() => closeInstances({ database, stores }));

  test("instances started together applied each migration exactly once", async () => {
    const sql = new SQL({ url: database.url, max: 1 });
    const [row] = await sql`select count(*)::int as n from drizzle.__drizzle_migrations`;
    await sql.close();
    expect(row.n).toBe(journal.entries.length);
  });

  test("simultaneous sign-ups of one username on two instances: exactly one 201", async () => {
    const replies = await Promise.all(
      [a, b, a, b].map((app, i) =>
        app.call("POST", "/svc-api/v1/users/create", {
          body: { username: "race", email: `race${i}@example.com`, password: "correct horse" },
        }),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  test("the sign-up limit is one count for both instances: 4 sign-ups over A and B, then 429 on either", async () => {
    // Two more instances, each with its own pool, counting sign-ups (the suite's a and b do not).
    const config = { trustProxy: 1, signup: { clientMax: 4 } };
    const [c, d] = await Promise.all([testApp({ on: stores[2], config }), testApp({ on: stores[0], config })]);
    const signUp = (app: typeof c, name: string, address = "203.0.113.50") =>
      app.call("POST", "/svc-api/v1/users/create", {
        body: { username: name, email: `${name}@example.com`, password: "correct horse" },
        headers: { "x-forwarded-for": address },
      });
    // Two at once on each: the count is taken in the database, so none of them is lost.
    const first = await Promise.all([signUp(c, "lim1"), signUp(d, "lim2"), signUp(c, "lim3"), signUp(d, "lim4")]);
    expect(first.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expectProblem(await signUp(c, "lim5"), 429, "too_many_requests");
    const refused = await signUp(d, "lim6");
    expectProblem(refused, 429, "too_many_requests");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await signUp(d, "lim7", "203.0.113.51")).status).toBe(201);
  });

  test("a token from one instance works on the other; a password change on one revokes it on both", async () => {
    const { token, password } = await a.signUp("carol");
    expect((await b.call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
    const changed = await a.call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "another secret" },
    });
    expect(changed.status).toBe(200);
    expectProblem(await a.call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
    await heard(1);
    expectProblem(await b.call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
    expect((await b.call("GET", "/svc-api/v1/users/all", { token: changed.body.token })).status).toBe(200);
  });

  describe("administration across instances", () => {
    const admin = async (name: string) => {
      const made = await a.signUp(name);
      await promote(a.store, made.user.id);
      return made;
    };

    test("a user disabled on A is refused on B at the next request, and their login on B gets 403", async () => {
      const root = await admin("root-x");
      const dora = await a.signUp("dora");
      expect((await b.call("GET", "/svc-api/v1/users/me", { token: dora.token })).status).toBe(200);
      const off = await a.call("PATCH", `/svc-api/v1/admin/users/${dora.user.id}`, {
        token: root.token,
        body: { status: "disabled" },
      });
      expect(off.status).toBe(200);
      await heard(1);
      expectProblem(await b.call("GET", "/svc-api/v1/users/me", { token: dora.token }), 401, "unauthorized");
      expectProblem(
        await b.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: dora.refresh } }),
        401,
        "invalid_refresh_token",
      );
      expectProblem(
        await b.call("POST", "/svc-api/v1/auth/login", { body: { username: "dora", password: dora.password } }),
        403,
        "account_disabled",
      );
    });

    test("two admins demoting each other on two instances at once: exactly one lands, one admin remains", async () => {
      const x = await admin("admin-x");
      const y = await admin("admin-y");
      // They are the only admins: earlier tests' admins go.
      for (const user of await a.store.users.search({ role: "admin", limit: 100 })) {
        if (user.id !== x.user.id && user.id !== y.user.id) await a.store.users.delete(user.id);
      }
      for (let round = 0; round < 5; round++) {
        const replies = await Promise.all([
          a.call("PATCH", `/svc-api/v1/admin/users/${y.user.id}`, { token: x.token, body: { role: "user" } }),
          b.call("PATCH", `/svc-api/v1/admin/users/${x.user.id}`, { token: y.token, body: { role: "user" } }),
        ]);
        const statuses = replies.map((r) => r.status).sort();
        expect(statuses[0]).toBe(200);
        expect([403, 409]).toContain(statuses[1]!);
        expect(await a.store.users.activeAdmins()).toBe(1);
        // Make the loser an admin again for the next round.
        const demoted = replies[0]!.status === 200 ? y : x;
        await promote(a.store, demoted.user.id);
      }
    });

    test("one reset code redeemed on both instances at once: one 200, the other 400 invalid_reset_code", async () => {
      const root = await admin("root-z");
      const eve = await a.signUp("eve");
      const issued = await a.call("POST", `/svc-api/v1/admin/users/${eve.user.id}/password-reset`, {
        token: root.token,
      });
      const body = (i: number) => ({
        username: "eve",
        reset_code: issued.body.reset_code,
        new_password: `new secret ${i}`,
      });
      const replies = await Promise.all([
        a.call("POST", "/svc-api/v1/auth/password-reset", { body: body(1) }),
        b.call("POST", "/svc-api/v1/auth/password-reset", { body: body(2) }),
        a.call("POST", "/svc-api/v1/auth/password-reset", { body: body(3) }),
        b.call("POST", "/svc-api/v1/auth/password-reset", { body: body(4) }),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400, 400]);
      for (const r of replies.filter((r) => r.status === 400)) expectProblem(r, 400, "invalid_reset_code");
    });
  });

  test("one invitation used on two instances at once (SVC_SIGNUP=invite): exactly one 201", async () => {
    const root = await a.signUp("root-inv");
    await promote(a.store, root.user.id);
    const invite = { signup: { mode: "invite" as const } };
    const [e, f] = await Promise.all([
      testApp({ on: stores[1], config: invite }),
      testApp({ on: stores[2], config: invite }),
    ]);
    const issued = await e.call("POST", "/svc-api/v1/admin/invitations", { token: root.token, body: {} });
    expect(issued.status).toBe(201);
    const replies = await Promise.all(
      [e, f, e, f].map((app, i) =>
        app.call("POST", "/svc-api/v1/users/create", {
          body: {
            username: `inv${i}`,
            email: `inv${i}@example.com`,
            password: "correct horse",
            invitation: issued.body.code,
          },
        }),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([201, 403, 403, 403]);
    for (const r of replies.filter((r) => r.status === 403)) expectProblem(r, 403, "invalid_invitation");
  });

  test("Idempotency-Key: a retry that lands on the other instance gets the first answer; a burst over both runs once", async () => {
    const { token, password } = await a.signUp("ike");
    const body = { current_password: password, new_password: "ivan's new secret" };
    const headers = { "Idempotency-Key": `k-${Bun.randomUUIDv7()}` };
    const first = await a.call("PUT", "/svc-api/v1/users/password", { token, body, headers });
    expect(first.status).toBe(200);
    const retry = await b.call("PUT", "/svc-api/v1/users/password", { token, body, headers });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);

    const key = { "Idempotency-Key": `k-${Bun.randomUUIDv7()}` };
    const create = { username: "once", email: "once@example.com", password: "correct horse battery" };
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : a).call("POST", "/svc-api/v1/users/create", { body: create, headers: key }),
      ),
    );
    // In process both instances see the client at one address ("unknown"): one caller, one first request.
    expect(replies.filter((r) => r.status === 201 && !r.headers.get("idempotent-replayed")).length).toBe(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectProblem(r, 409, "idempotency_key_in_flight");
  });

  test("the Idempotency-Key bound per caller holds across instances: a burst of fresh keys over both keeps exactly the bound", async () => {
    const config = { idempotencyKeysPerCaller: 3 };
    const [c, d] = [await testApp({ on: stores[0], config }), await testApp({ on: stores[1], config })];
    const { token } = await c.signUp("kent");
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? d : c).call("PUT", "/svc-api/v1/users", {
          token,
          body: { username: `kent${i}` },
          headers: { "Idempotency-Key": `k-${Bun.randomUUIDv7()}` },
        }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    for (const r of replies.filter((r) => r.status !== 200)) expectProblem(r, 429, "idempotency_keys_exhausted");
  });

  test("ETags and versions across instances: a tag read on A is 304 on B, and 200 on either after a change on B; If-Match and ifVersion hold across both", async () => {
    const fern = await a.signUp("fern");
    const tag = (await a.call("GET", "/svc-api/v1/users/all", { token: fern.token })).headers.get("etag")!;
    const unchanged = await b.call("GET", "/svc-api/v1/users/all", {
      token: fern.token,
      headers: { "if-none-match": tag },
    });
    expect(unchanged.status).toBe(304);
    await b.signUp("ezra");
    await heard(0);
    for (const app of [a, b])
      expect(
        (await app.call("GET", "/svc-api/v1/users/all", { token: fern.token, headers: { "if-none-match": tag } }))
          .status,
      ).toBe(200);
    // Two writers holding one tag of fern's record, one on each instance: exactly one lands.
    const me = (await a.call("GET", "/svc-api/v1/users/me", { token: fern.token })).headers.get("etag")!;
    const writes = await Promise.all(
      [a, b].map((app, i) =>
        app.call("PUT", "/svc-api/v1/users", {
          token: fern.token,
          body: { username: `fern${i}` },
          headers: { "if-match": me },
        }),
      ),
    );
    expect(writes.map((r) => r.status).sort()).toEqual([200, 412]);
    // And one category version updated on both at once.
    const made = await a.graphql('mutation { createCategory(input: { name: "Atlas" }) { id } }', { token: fern.token });
    const id = made.body.data.createCategory.id;
    const update = `mutation { updateCategory(id: "${id}", input: { icon: "map" }, ifVersion: 1) { version } }`;
    const updates = await Promise.all([a, b].map((app) => app.graphql(update, { token: fern.token })));
    const codes = updates.map((r) => r.body.errors?.[0]?.extensions ?? r.body.data.updateCategory);
    expect(codes).toContainEqual({ version: 2 });
    expect(codes).toContainEqual({ code: "CONFLICT", reason: "version_mismatch", currentVersion: 2 });
    // The other tests expect the category list as they left it.
    const removed = await b.graphql(`mutation { deleteCategory(id: "${id}", ifVersion: 2) }`, { token: fern.token });
    expect(removed.body).toEqual({ data: { deleteCategory: true } });
  });
});
