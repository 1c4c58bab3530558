// The database goes away and comes back: requests fail fast with 503, and svc heals by itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { expectProblem, testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable, type TestDatabase } from "./postgres.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

const available = await postgresAvailable();

describe.skipIf(!available)("a PostgreSQL outage", () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let store: VersionedStore;
  let app: Awaited<ReturnType<typeof testApp>>;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase("outage");
    proxy = startTcpProxy(Number(new URL(database.url).port || 5432));
    const url = new URL(database.url);
    url.port = String(proxy.port);
    store = await openPostgresStore({
      kind: "postgres",
      url: url.toString(),
      poolMax: 4,
      connectTimeoutS: 1,
      statementTimeoutMs: 1000,
      // Short, so that memory gives way to the database soon after the outage begins.
      stalenessMs: 100,
    });
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
    for (;;) {
      const reply = await app.call("GET", "/svc-api/v1/users/all", { token });
      if (reply.status === 200) return performance.now() - started;
      expect(reply.status).toBe(503);
      if (performance.now() - started > ms) throw new Error(`still ${reply.status} after ${ms} ms`);
      await Bun.sleep(100);
    }
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

/** The first answer that is not a 200: one kept in memory for a moment is repeated until it expires. */
async function until503<T extends { status: number }>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    const reply = await call();
    if (reply.status !== 200) return reply;
    await Bun.sleep(50);
  }
}
