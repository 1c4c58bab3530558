// The database goes away and comes back: requests fail fast with 503, and svc heals by itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgresStore } from "../../src/db/postgres/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { expectProblem, testApp } from "../helpers.ts";
import { createTestDatabase, postgresAvailable, type TestDatabase } from "../postgres.ts";
import { startTcpProxy, type TcpProxy } from "../tcp-proxy.ts";
import { ManualClock } from "../backup-clock.ts";
import { waitUntil } from "../support/wait.ts";

const available = await postgresAvailable();

/** A new database reached through a TCP proxy the test can cut, with short timeouts. */
async function behindProxy(label: string) {
  const database = await createTestDatabase(label);
  const proxy = startTcpProxy(Number(new URL(database.url).port || 5432));
  const url = new URL(database.url);
  url.port = String(proxy.port);
  const store = await openPostgresStore({
    kind: "postgres",
    url: url.toString(),
    poolMax: 4,
    connectTimeoutS: 1,
    statementTimeoutMs: 1000,
    // Short, so that memory gives way to the database soon after the outage begins.
    stalenessMs: 100,
  });
  return { database, proxy, store };
}

describe.skipIf(!available)("a PostgreSQL outage", () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let store: VersionedStore;
  let app: Awaited<ReturnType<typeof testApp>>;
  let token: string;

  beforeAll(async () => {
    ({ database, proxy, store } = await behindProxy("outage"));
    app = await testApp({ on: store });
    token = (await app.signUp("ann")).token;
  });
  afterAll(async () => {
    proxy?.set("up");
    await store?.close();
    proxy?.stop();
    await database?.drop();
  });

  async function healsWithin(ms: number): Promise<number> {
    const started = performance.now();
    await waitUntil(
      async () => {
        const reply = await app.call("GET", "/svc-api/v1/users/all", { token });
        if (reply.status === 200) return true;
        expect(reply.status).toBe(503);
        return false;
      },
      { what: "a 200 once the database is back", timeoutMs: ms, everyMs: 100 },
    );
    return performance.now() - started;
  }

  for (const mode of ["down", "silent"] as const) {
    test(`${mode === "down" ? "stopped (connections closed, new ones refused)" : "unreachable (nothing answers)"}: 503 database_unavailable within seconds, then heals without a restart`, async () => {
      expect((await app.call("GET", "/svc-api/v1/users/all", { token })).status).toBe(200);
      proxy.set(mode);

      // Each answer is bounded by the connect and statement timeouts (2 s each here); one that hung would
      // run into the test's own time limit.
      // The token's standing and the page may come from memory while the last ping heard is younger than
      // SVC_DB_STALENESS (0.1 s here); no ping comes back now, so then every read asks the database.
      const list = await until503(() => app.call("GET", "/svc-api/v1/users/all", { token }));
      expectProblem(list, 503, "database_unavailable");
      const login = await app.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "ann", password: "correct horse battery" },
      });
      expectProblem(login, 503, "database_unavailable");
      const graphql = await app.graphql("{ categories { id } }", { token });
      expect(graphql.status).toBe(503);
      // Health may repeat an ok for a moment (CHECK_REUSE_MS) before it asks the database again.
      const health = await until503(() => app.call("GET", "/svc/health"));
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: "unavailable", checks: { database: "unavailable" } });

      proxy.set("up");
      await healsWithin(15_000);
      expect((await app.call("GET", "/svc/health")).status).toBe(200);
    }, 60_000);
  }
});

describe.skipIf(!available)("a PostgreSQL outage in the log", () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let store: VersionedStore;

  beforeAll(async () => {
    ({ database, proxy, store } = await behindProxy("outage_log"));
  });
  afterAll(async () => {
    proxy?.set("up");
    await store?.close();
    proxy?.stop();
    await database?.drop();
  });

  test("writes failing while the database is gone: one warn line for the event, then the repeats counted and summarised", async () => {
    const clock = new ManualClock();
    const app = await testApp({ on: store, clock });
    const { token } = await app.signUp("bea");
    const before = (await app.logs()).length;
    proxy.set("down");
    let n = 0;
    const write = () =>
      app.call("POST", "/svc-api/v1/users/create", {
        body: { username: `w${++n}`, email: `w${n}@example.com`, password: "correct horse battery" },
      });
    expectProblem(await until503(write), 503, "database_unavailable");
    for (let i = 0; i < 2; i++) expectProblem(await write(), 503, "database_unavailable");
    const graphql = await app.graphql('mutation { createCategory(input: { name: "g" }) { id } }', { token });
    expect(graphql.body.errors[0].extensions.code).toBe("SERVICE_UNAVAILABLE");
    const lines = () => (clock.due(), app.logs().then((all) => all.slice(before).map((l) => JSON.parse(l))));
    const said = (await lines()).filter((l) => l.level !== "debug" && l.msg !== "request completed");
    // No stack per request: one warn line, naming what happened.
    expect(said).toEqual([
      expect.objectContaining({ level: "warn", msg: expect.stringMatching(/^database unavailable: /) }),
    ]);
    expect(said[0].err).toBeUndefined();
    // Which database (SVC_DATABASE_URL without its password), and the driver's code for what happened.
    expect(typeof said[0].database).toBe("string");
    expect(said[0].code).toMatch(/^ERR_POSTGRES_CONNECTION_/);
    // The window ends: the repeats (2 REST, 1 GraphQL, and the 503s until503 saw) in one line.
    clock.fireNext();
    const summary = (await lines()).filter((l) => l.level === "warn").at(-1);
    expect(summary).toMatchObject({
      level: "warn",
      msg: expect.stringMatching(/^database unavailable \(repeated \d+ times in the last 10 s\)$/),
    });
    expect(summary.repeated).toBeGreaterThanOrEqual(3);
    // Another failure after the window is a new event: a line of its own.
    expectProblem(await write(), 503, "database_unavailable");
    expect((await lines()).filter((l) => l.level === "warn")).toHaveLength(3);
    proxy.set("up");
  }, 60_000);
});

/** The first answer that is not a 200: one kept in memory for a moment is repeated until it expires. */
async function until503<T extends { status: number }>(call: () => Promise<T>): Promise<T> {
  let reply: T | undefined;
  await waitUntil(async () => (reply = await call()).status !== 200, {
    what: "an answer other than 200",
    timeoutMs: 30_000,
    everyMs: 50,
  });
  return reply!;
}
