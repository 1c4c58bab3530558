// The connection count behind svc_db_pool_connections on PostgreSQL, against the real driver: Bun's SQL
// client reports opens and closes (and failed attempts, as closes) without saying which connection.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { connectionCount } from "../../src/db/postgres/connections.ts";
import { createTestDatabase, postgresAvailable, type TestDatabase } from "../postgres.ts";
import { startTcpProxy } from "../tcp-proxy.ts";
import { runProcess, SOURCE_SVC } from "../support/cli.ts";
import { captureCli } from "../support/cli.ts";
import { cameToHold } from "../support/wait.ts";
import { failure } from "../support/failure.ts";

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
  const eventually = (check: () => boolean) => cameToHold(check, { timeoutMs: 2000, everyMs: 10 });

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
    expect(await failure(refused`select 1`)).toBeInstanceOf(Error);
    await refused.close();
    const nowhere = new URL(database.url);
    nowhere.pathname = "/svc_no_such_database";
    const turnedAway = new SQL({ url: nowhere.toString(), max: 1, onclose: count.onclose });
    expect(await failure(turnedAway`select 1`)).toBeInstanceOf(Error);
    await turnedAway.close();
    expect(count.open()).toBe(2);
    await sql.close();
  });
});

/**
 * What an operator reads when svc cannot connect: at start (one line, exit 1: a supervisor retries) and from
 * `svc check`. Each names the database, the role, the host and the port and says what happened; never the password.
 */
describe.skipIf(!available)("connection failures, in words", () => {
  const PASSWORD = "pw-never-shown-8f3a";
  const url = (role: string, port: number | string, name: string) =>
    `postgres://${role}:${PASSWORD}@127.0.0.1:${port}/${name}`;

  async function check(databaseUrl: string, argv = ["check"]) {
    const { code, err } = await captureCli(argv, { SVC_DATABASE_URL: databaseUrl });
    return { code, err };
  }

  /** `svc serve`'s refusal: its one line on stderr and its exit code. */
  async function start(databaseUrl: string) {
    const proc = await runProcess(SOURCE_SVC, {
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_DATABASE_URL: databaseUrl, SVC_DB_CONNECT_TIMEOUT: "1s" },
    });
    return { code: proc.code, err: proc.stderr };
  }

  const cases = [
    {
      name: "a database that does not exist",
      url: () => url("postgres", 5432, "svc_no_such_database"),
      says: 'database "svc_no_such_database" does not exist (SQLSTATE 3D000)',
    },
    {
      name: "a role that does not exist",
      url: () => url("svc_no_such_role", 5432, "postgres"),
      says: 'role "svc_no_such_role" does not exist (SQLSTATE 28000)',
    },
    {
      name: "a port nothing listens on",
      url: () => url("postgres", 1, "postgres"),
      says: "connection refused: nothing listens at that host and port, or a firewall refuses (ERR_POSTGRES_CONNECTION_REFUSED)",
    },
  ];
  for (const each of cases) {
    test(`${each.name}: svc check and start-up say so, naming database, role, host and port`, async () => {
      const where = each.url().replace(`:${PASSWORD}@`, "@");
      expect(await check(each.url())).toEqual({ code: 1, err: `svc check: ${where}: ${each.says}\n` });
      // Every other command too: an operator's `svc user list` names where it tried.
      expect(await check(each.url(), ["user", "list"])).toEqual({
        code: 1,
        err: `svc user: cannot open the database ${where}: ${each.says}\n`,
      });
      expect(await start(each.url())).toEqual({
        code: 1,
        err: `svc: cannot open the database ${where}: ${each.says}\n`,
      });
    });
  }

  test("a server that accepts and never answers: start-up says it timed out, and where", async () => {
    const proxy = startTcpProxy(5432);
    proxy.set("silent");
    try {
      const silent = url("postgres", proxy.port, "postgres");
      const where = silent.replace(`:${PASSWORD}@`, "@");
      expect(await start(silent)).toEqual({
        code: 1,
        err: `svc: cannot open the database ${where}: Connection timeout after 1s (sent startup message, but never received response) (ERR_POSTGRES_CONNECTION_TIMEOUT)\n`,
      });
    } finally {
      proxy.stop();
    }
  });
});
