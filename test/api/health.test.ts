import { describe, expect, test } from "bun:test";
import type { Store } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
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
      status: "ok",
      uptime_s: reply.body.uptime_s,
      checks: { database: "ok" },
    });
    expect(typeof reply.body.uptime_s).toBe("number");
    expect(reply.headers.get("cache-control")).toBe("no-store");
  });

  test("answers with or without a trailing slash, and needs no token", async () => {
    const { call } = await testApp();
    expect((await call("GET", "/svc/health/")).status).toBe(200);
  });

  test("is 503 unavailable, naming the failing check, when the database does not answer", async () => {
    const down = (store: Store): Store => ({ ...store, ping: () => Promise.reject(new Error("database is gone")) });
    const { call } = await testApp({ store: down });
    const reply = await call("GET", "/svc/health");
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ service: "svc", status: "unavailable", checks: { database: "unavailable" } });
  });
});
