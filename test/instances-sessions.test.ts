// Two instances of svc on one PostgreSQL database, each with its own pool, as behind a load balancer:
// realtime, sessions and tokens, throttling, categories and cached reads.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { ThrottleRecord } from "../src/db/store.ts";
import { expectProblem, testApp, promote } from "./helpers.ts";
import { listen, opened, sse, stopAll, ws } from "./subscriptions.ts";
import { postgresAvailable } from "./postgres.ts";
import { closeInstances, type Instances, openInstances } from "./support/instances.ts";

const available = await postgresAvailable();

describe.skipIf(!available)("two instances on one PostgreSQL database", () => {
  let { database, stores, a, b, heard } = {} as Instances;
  beforeAll(async () => {
    ({ database, stores, a, b, heard } = await openInstances("instances-sessions"));
  });
  afterAll(() => closeInstances({ database, stores }));

  describe("realtime across instances", () => {
    afterEach(stopAll);

    test("a change on A reaches subscribers on B (SSE and WebSocket) within a second; a rolled-back one never", async () => {
      const [onA, onB] = [listen(a), listen(b)];
      const gail = await a.signUp("gail");
      const streams = [sse(onB.url, gail.token), ws(onB.url, gail.token), sse(onA.url, gail.token)];
      await opened(b, 2);
      await opened(a, 1);
      const made = await a.graphql('mutation { createCategory(input: { name: "Relayed" }) { id } }', {
        token: gail.token,
      });
      const id = made.body.data.createCategory.id;
      for (const stream of streams) await stream.count(1);
      // A clash rolls back: nothing is sent. The next change comes next.
      const clash = await b.graphql('mutation { createCategory(input: { name: "relayed" }) { id } }', {
        token: gail.token,
      });
      expect(clash.body.errors[0].extensions.code).toBe("CONFLICT");
      await b.graphql(`mutation { deleteCategory(id: "${id}") }`, { token: gail.token });
      for (const stream of streams) {
        await stream.count(2, 1000);
        expect(stream.results.map((r) => r.data?.categoryEvents.kind)).toEqual(["CREATED", "DELETED"]);
      }
    });

    test("the listening connection lost: what changed meanwhile comes from the log once it is back, in order, then live changes", async () => {
      const onB = listen(b);
      const hugo = await a.signUp("hugo");
      const stream = sse(onB.url, hugo.token);
      await opened(b, 1);
      const sql = new SQL({ url: database.url, max: 1 });
      const killed = await sql`select pg_terminate_backend(pid) as gone from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`;
      expect(killed.length).toBeGreaterThan(0);
      await sql.close();
      // Written while B is not listening: its notification never reaches B.
      await a.graphql('mutation { createCategory(input: { name: "While away" }) { id } }', { token: hugo.token });
      await stream.count(1, 10_000);
      await a.graphql('mutation { createCategory(input: { name: "After" }) { id } }', { token: hugo.token });
      await stream.count(2, 5000);
      expect(stream.results.map((r) => r.data?.categoryEvents.category?.name ?? r.data?.categoryEvents.kind)).toEqual([
        "While away",
        "After",
      ]);
      const removed = await a.graphql("{ categories { id name } }", { token: hugo.token });
      for (const category of removed.body.data.categories.filter((c: { name: string }) =>
        ["While away", "After"].includes(c.name),
      ))
        await a.graphql(`mutation { deleteCategory(id: "${category.id}") }`, { token: hugo.token });
    }, 20_000);
  });

  test("a logout on one instance ends that token on the other", async () => {
    const { token } = await a.signUp("gina");
    expect((await a.call("POST", "/svc-api/v1/auth/logout", { token })).status).toBe(204);
    await heard(1);
    expectProblem(await b.call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
  });

  test("20 parallel refreshes of one token, spread over both instances, all get the one successor pair", async () => {
    const { refresh } = await a.signUp("rita");
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? b : a).call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(replies.map((r) => `${r.body.token} ${r.body.refresh_token}`)).size).toBe(1);
    const { token } = replies[0]!.body;
    expect((await b.call("GET", "/svc-api/v1/auth/sessions", { token })).body).toHaveLength(1);
  });

  test("a refresh on one instance and a reuse on the other after the window: detected, the session ended on both", async () => {
    const short = { sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 7200, reuseWindowMs: 100 } };
    const [one, two] = [
      await testApp({ on: stores[0], config: short }),
      await testApp({ on: stores[1], config: short }),
    ];
    const { refresh } = await one.signUp("rosa");
    const successor = (await one.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } })).body;
    await Bun.sleep(150);
    expectProblem(
      await two.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } }),
      401,
      "refresh_token_reused",
    );
    await heard(0);
    expectProblem(await one.call("GET", "/svc-api/v1/users/me", { token: successor.token }), 401, "unauthorized");
    expectProblem(
      await one.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: successor.refresh_token } }),
      401,
      "invalid_refresh_token",
    );
  });

  test("a session ended on one instance ends its tokens on the other", async () => {
    const { token, password } = await a.signUp("sara");
    const phone = (await b.call("POST", "/svc-api/v1/auth/login", { body: { username: "sara", password } })).body;
    const sid = JSON.parse(Buffer.from(phone.token.split(".")[1], "base64url").toString()).sid;
    expect((await a.call("DELETE", `/svc-api/v1/auth/sessions/${sid}`, { token })).status).toBe(204);
    await heard(1);
    expectProblem(await b.call("GET", "/svc-api/v1/users/me", { token: phone.token }), 401, "unauthorized");
  });

  test("a throttled account is throttled on every instance", async () => {
    const { password } = await a.signUp("hank");
    for (const app of [a, b, a, b, a])
      await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "hank", password: "wrong password" } });
    expectProblem(
      await b.call("POST", "/svc-api/v1/auth/login", { body: { username: "hank", password } }),
      429,
      "too_many_requests",
    );
  });

  test("a delete on one instance ends the user's tokens on the other", async () => {
    const { token } = await a.signUp("dave");
    expect((await b.call("DELETE", "/svc-api/v1/users/", { token })).status).toBe(204);
    await heard(0);
    expectProblem(await a.call("GET", "/svc-api/v1/users/all", { token }), 401, "unauthorized");
  });

  test("categories are shared, and their names unique across instances", async () => {
    const { token } = await a.signUp("erin");
    const create = (app: typeof a) =>
      app.graphql('mutation { createCategory(input: { name: "Shared" }) { id } }', { token });
    const results = await Promise.all([create(a), create(b), create(a), create(b)]);
    expect(results.filter((r) => r.body.data?.createCategory).length).toBe(1);
    expect(results.filter((r) => r.body.errors?.[0]?.extensions?.code === "CONFLICT").length).toBe(3);
    await heard(1);
    const listed = await b.graphql("{ categories { name } }", { token });
    expect(listed.body.data.categories).toEqual([{ name: "Shared" }]);
  });

  test("cached reads: a write on one instance shows on the other once it has heard of it, and at once on the writer", async () => {
    const { token } = await a.signUp("ivan");
    const names = async (app: typeof a) =>
      (await app.call("GET", "/svc-api/v1/users/all?limit=1000", { token })).body.map(
        (u: { username: string }) => u.username,
      );
    const before = await names(a); // a now holds this page in memory
    expect(await names(a)).toEqual(before);
    await b.signUp("judy");
    expect(await names(b)).toEqual([...before, "judy"]);
    await heard(0);
    expect(await names(a)).toEqual([...before, "judy"]);

    const list = async (app: typeof a) =>
      (await app.graphql("{ categories { name icon } }", { token })).body.data.categories;
    const cached = await list(a);
    await b.graphql('mutation { createCategory(input: { name: "Fresh" }) { id } }', { token });
    await heard(0);
    expect(await list(a)).toEqual(
      [...cached, { name: "Fresh", icon: null }].sort((x, y) =>
        x.name.toLowerCase().localeCompare(y.name.toLowerCase()),
      ),
    );
    const { id } = (await b.graphql('mutation { createCategory(input: { name: "Fresher" }) { id } }', { token })).body
      .data.createCategory;
    await a.graphql("{ categories { name } }", { token });
    await b.graphql(`mutation { updateCategory(id: "${id}", input: { icon: "new" }) { id } }`, { token });
    expect((await list(b)).find((c: { name: string }) => c.name === "Fresher").icon).toBe("new");
    await heard(0);
    expect((await list(a)).find((c: { name: string }) => c.name === "Fresher").icon).toBe("new");
  });

  test("a write outside a transaction (a profile update) shows at once on the writer, its list kept in memory", async () => {
    const made = await a.signUp("kept-writer");
    const names = async () =>
      (await a.call("GET", "/svc-api/v1/users/all?limit=1000", { token: made.token })).body.map(
        (u: { username: string }) => u.username,
      );
    await heard(0);
    for (let i = 0; i < 3; i++) expect(await names()).toContain("kept-writer");
    const renamed = await a.call("PUT", "/svc-api/v1/users/", {
      token: made.token,
      body: { username: "kept-writer-2" },
    });
    expect(renamed.status).toBe(200);
    const after = await names();
    expect(after).toContain("kept-writer-2");
    expect(after).not.toContain("kept-writer");
  });

  test("a revocation is refused at once on the instance that made it, though the token's standing was kept in memory there", async () => {
    const root = await a.signUp("root-k");
    await promote(a.store, root.user.id);
    const ways: Record<string, (made: Awaited<ReturnType<typeof a.signUp>>) => Promise<Response | { status: number }>> =
      {
        logout: (made) => a.call("POST", "/svc-api/v1/auth/logout", { token: made.token }),
        "password change": (made) =>
          a.call("PUT", "/svc-api/v1/users/password", {
            token: made.token,
            body: { current_password: made.password, new_password: "a new secret 1" },
          }),
        disable: (made) =>
          a.call("PATCH", `/svc-api/v1/admin/users/${made.user.id}`, {
            token: root.token,
            body: { status: "disabled" },
          }),
        deletion: (made) => a.call("DELETE", "/svc-api/v1/users/", { token: made.token }),
      };
    for (const [way, revoke] of Object.entries(ways)) {
      const made = await a.signUp(`kept-${way.replace(" ", "-")}`);
      await heard(0);
      for (let i = 0; i < 3; i++)
        expect((await a.call("GET", "/svc-api/v1/users/me", { token: made.token })).status).toBe(200);
      expect((await revoke(made)).status).toBeLessThan(300);
      expectProblem(await a.call("GET", "/svc-api/v1/users/me", { token: made.token }), 401, "unauthorized");
    }
  });

  test("a lost listening connection: a token revoked meanwhile is refused once the instance listens again", async () => {
    const { token } = await a.signUp("lena");
    const other = await a.signUp("lars");
    await heard(1);
    for (let i = 0; i < 3; i++) expect((await b.call("GET", "/svc-api/v1/users/me", { token })).status).toBe(200);
    const sql = new SQL({ url: database.url, max: 1 });
    const killed = await sql`select pg_terminate_backend(pid) as gone from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen%'`;
    await sql.close();
    expect(killed.length).toBeGreaterThan(0);
    expect((await a.call("POST", "/svc-api/v1/auth/logout", { token })).status).toBe(204);
    await heard(1);
    expectProblem(await b.call("GET", "/svc-api/v1/users/me", { token }), 401, "unauthorized");
    expect((await b.call("GET", "/svc-api/v1/users/me", { token: other.token })).status).toBe(200);
  });

  test("failed-login state is one count for every instance", async () => {
    const at = new Date().toISOString();
    const step = (current: ThrottleRecord | null) => ({
      next: { key: "account:frank", failures: (current?.failures ?? 0) + 1, lastFailureAt: at, blockedUntil: null },
      result: current?.failures ?? 0,
    });
    const seen = await Promise.all(
      stores.flatMap((store) => Array.from({ length: 4 }, () => store.throttle.transition("account:frank", step))),
    );
    expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    for (const store of stores) expect((await store.throttle.get("account:frank"))?.failures).toBe(12);
  });

  test("a burst of wrong passwords spread over both instances: at most 5 are checked", async () => {
    await a.signUp("burst");
    const apps = [a, b];
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        apps[i % 2]!.call("POST", "/svc-api/v1/auth/login", { body: { username: "burst", password: `guess ${i}` } }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
  });
});
