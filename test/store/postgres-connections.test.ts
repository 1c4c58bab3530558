// The connection count behind svc_db_pool_connections on PostgreSQL, against the real driver: Bun's SQL
// client reports opens and closes (and failed attempts, as closes) without saying which connection.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { connectionCount } from "../../src/db/postgres/connections.ts";
import { createTestDatabase, postgresAvailable, type TestDatabase } from "../postgres.ts";

const available = await postgresAvailable();

describe.skipIf(!available)("the PostgreSQL connection count", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase("connections");
  });
  afterAll(() => database?.drop());

  function client(url: string, max: number) {
    const count = connectionCount();
    const sql = new SQL({ url, max, connectionTimeout: 2, onconnect: count.onconnect, onclose: count.onclose });
    return { sql, count };
  }

  /** Until `check` holds: the client reports connections as their sockets open and close. */
  async function eventually(check: () => boolean) {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return check();
  }

  test("counts the pool's connections as they open, and none once it is closed", async () => {
    const { sql, count } = client(database.url, 3);
    await Promise.all(Array.from({ length: 6 }, () => sql`select pg_sleep(0.02)`));
    expect(await eventually(() => count.open() === 3)).toBe(true);
    await sql.close();
    expect(count.open()).toBe(0);
  });

  test("a connection the server ends is no longer counted", async () => {
    const name = `svc-count-${process.pid}`;
    const url = new URL(database.url);
    url.searchParams.set("application_name", name);
    const { sql, count } = client(url.toString(), 2);
    await sql`select 1`;
    expect(await eventually(() => count.open() === 2)).toBe(true);
    const admin = new SQL({ url: database.url, max: 1 });
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`;
    await admin.close();
    expect(await eventually(() => count.open() === 0)).toBe(true);
    await sql.close();
  });

  test("attempts that never open are not set against the open connections", async () => {
    const { sql, count } = client(database.url, 2);
    await sql`select 1`;
    expect(await eventually(() => count.open() === 2)).toBe(true);
    // The same count fed a refused attempt and a start-up refusal, as the driver reports them.
    const refused = new SQL({ url: "postgres://postgres@127.0.0.1:1/postgres", max: 1, onclose: count.onclose });
    await expect(refused`select 1`).rejects.toThrow();
    await refused.close();
    const nowhere = new URL(database.url);
    nowhere.pathname = "/svc_no_such_database";
    const turnedAway = new SQL({ url: nowhere.toString(), max: 1, onclose: count.onclose });
    await expect(turnedAway`select 1`).rejects.toThrow();
    await turnedAway.close();
    expect(count.open()).toBe(2);
    await sql.close();
  });
});
