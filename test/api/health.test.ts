import { describe, expect, test } from "bun:test";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
import { CHECK_REUSE_MS } from "../../src/health/probes.ts";
import { version } from "../../package.json";

describe("GET /svc/health", () => {
  test("reports service, version, environment, status, uptime and the database check", async () => {
    const { call } = await testApp();
    const reply = await call("GET", "/svc/health");
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      service: "svc",
      version,
      environment: "test",
      database_kind: process.env.TEST_DATABASE === "postgres" ? "postgres" : "sqlite",
      status: "ok",
      uptime_s: reply.body.uptime_s,
      checks: { database: "ok", storage: "ok" },
      // The test configuration's mail is on (logged): its sender's state is among the details.
      mail: "ok",
    });
    expect(typeof reply.body.uptime_s).toBe("number");
    expect(reply.headers.get("cache-control")).toBe("no-store");
  });

  test("answers with or without a trailing slash, and needs no token", async () => {
    const { call } = await testApp();
    expect((await call("GET", "/svc/health/")).status).toBe(200);
  });

  test("is 503 unavailable, naming the failing check, when the database does not answer", async () => {
    const down = (store: VersionedStore): VersionedStore => ({
      ...store,
      ping: () => Promise.reject(new Error("database is gone")),
    });
    const { call } = await testApp({ store: down });
    const reply = await call("GET", "/svc/health");
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ service: "svc", status: "unavailable", checks: { database: "unavailable" } });
  });

  test("answers as JSON with the headers every answer carries, whether its check ran now or was kept", async () => {
    const down = (store: VersionedStore): VersionedStore => ({
      ...store,
      ping: () => Promise.reject(new Error("database is gone")),
    });
    for (const { store, status } of [
      { store: undefined, status: 200 },
      { store: down, status: 503 },
    ]) {
      const { call } = await testApp(store && { store });
      // The first probe waits for its check; the second is answered at once from a kept "ok" (or checks again).
      for (const id of ["first", "second"]) {
        const reply = await call("GET", "/svc/health", { headers: { "x-request-id": id } });
        expect(reply.status).toBe(status);
        expect(reply.headers.get("content-type")).toBe("application/json");
        expect(reply.headers.get("cache-control")).toBe("no-store");
        expect(reply.headers.get("x-content-type-options")).toBe("nosniff");
        expect(reply.headers.get("x-request-id")).toBe(id);
      }
    }
  });

  test("a probe whose check is kept is answered with a Response, not a promise of one", async () => {
    // A promise would cost every probe a turn of the event loop. Elysia compiles a route as async when a
    // hook's source looks async, or takes Elysia's whole context (it then parses everything a route might read).
    const { app } = await testApp();
    const server = undefined as unknown as Parameters<typeof app.handlers.fetch>[1];
    // The first probe's check runs; the next ones answer from it.
    await app.handlers.fetch(new Request("http://localhost/svc/health"), server);
    for (const path of ["/svc/health", "/svc/health/live", "/svc/health/ready"]) {
      const answer = app.handlers.fetch(new Request(`http://localhost${path}`), server);
      expect(answer).toBeInstanceOf(Response);
      expect((answer as Response).status).toBe(200);
    }
  });

  describe("the database check (probes need no token, so they must not turn into a query each)", () => {
    /** A store whose ping counts its calls and answers as `state.up` says, after `state.delayMs`. */
    function watched() {
      const state = { up: true, pings: 0, delayMs: 0 };
      const wrap = (store: VersionedStore): VersionedStore => ({
        ...store,
        ping: async () => {
          state.pings++;
          await Bun.sleep(state.delayMs);
          if (!state.up) throw new Error("database is gone");
        },
      });
      return { state, wrap };
    }

    test("probes arriving while a check runs share it", async () => {
      const { state, wrap } = watched();
      state.delayMs = 50;
      const { call } = await testApp({ store: wrap });
      const replies = await Promise.all(Array.from({ length: 5 }, () => call("GET", "/svc/health")));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(state.pings).toBe(1);
    });

    test("an ok answers later probes for a while, then the database is asked again", async () => {
      const { state, wrap } = watched();
      const { call } = await testApp({ store: wrap });
      expect((await call("GET", "/svc/health")).status).toBe(200);
      state.up = false;
      expect((await call("GET", "/svc/health/ready")).status).toBe(200);
      expect(state.pings).toBe(1);
      await Bun.sleep(CHECK_REUSE_MS + 50);
      expect((await call("GET", "/svc/health")).body).toMatchObject({
        status: "unavailable",
        checks: { database: "unavailable" },
      });
      expect(state.pings).toBe(2);
    });

    test("a failure is not reused: recovery shows on the next probe", async () => {
      const { state, wrap } = watched();
      state.up = false;
      const { call } = await testApp({ store: wrap });
      expect((await call("GET", "/svc/health")).status).toBe(503);
      expect((await call("GET", "/svc/health")).status).toBe(503);
      state.up = true;
      expect((await call("GET", "/svc/health")).status).toBe(200);
      expect(state.pings).toBe(3);
    });
  });
});
