// The compiled binary's signals and exits: SIGHUP, SIGTERM and SIGINT, kill -9 and what it leaves, a taken
// port, a start-up failure.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { createTestDatabase, postgresAvailable } from "../postgres.ts";
import { runProcess } from "../support/cli.ts";
import { emptyFolderWithBinary, json, prepareBinary, SECRET, start, stop, svcIn } from "./support/svc.ts";
import { waitUntil } from "../support/wait.ts";

const pgAvailable = await postgresAvailable();

beforeAll(prepareBinary, 120_000);

describe("the compiled binary, alone in an empty folder", () => {
  test("SIGHUP on plain HTTP is logged and ignored: svc keeps serving, and SIGTERM still stops it", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir);
    for (let i = 1; i <= 2; i++) {
      running.proc.kill("SIGHUP");
      const heard = () => running.output().split('"msg":"SIGHUP: nothing to reload"').length - 1;
      await waitUntil(() => heard() >= i || running.proc.exitCode !== null, { what: `SIGHUP ${i} logged`, everyMs: 1 });
      expect(running.proc.exitCode).toBeNull();
      expect((await fetch(`${running.base}/svc/health/live`)).status).toBe(200);
    }
    expect(running.output()).not.toContain('"svc stopping');
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test.each(["SIGTERM", "SIGINT"] as const)(
    "%s lets in-flight requests finish, writes every access line, then exits 0",
    async (signal) => {
      const dir = emptyFolderWithBinary();
      const running = await start(dir, { SVC_LOG_LEVEL: "debug" });
      // Sign-ups do real argon2id work, so they are still in flight when the signal lands.
      const count = 12; // argon2id runs two at a time on two cores: most are still hashing when the signal lands
      const inFlight = Array.from({ length: count }, (_, i) =>
        json(running.base, "POST", "/svc-api/v1/users/create", {
          username: `user${i}`,
          email: `u${i}@example.com`,
          password: "correct horse",
        }),
      );
      const started = () => running.output().split('"msg":"request started"').length - 1;
      await waitUntil(() => started() >= count, { what: `${count} requests started`, everyMs: 1 });
      running.proc.kill(signal);
      const replies = await Promise.all(inFlight);
      expect(replies.map((r) => r.status)).toEqual(Array(count).fill(201));
      expect(await running.proc.exited).toBe(0);
      // At least one sign-up finished after the signal arrived: the drain was real.
      const log = running.output();
      expect(log).toContain(`"signal":"${signal}"`);
      expect(log.lastIndexOf('"status":201')).toBeGreaterThan(log.indexOf('"svc stopping'));
      expect(log.split('"msg":"request completed"').length - 1).toBe(count);
    },
    30_000,
  );

  test("every acknowledged write survives kill -9 under load", async () => {
    const dir = emptyFolderWithBinary();
    // All from this one address: past the sign-up limit's 30 an hour, the load would be 429s.
    const running = await start(dir, { SVC_SIGNUP_CLIENT_MAX: "1000000" });
    // Eight clients sign up as fast as they can; the process is killed mid-stream.
    const acknowledged = await killedMidStream(running, { clients: 8, atLeast: 40, limit: 2000 }, async (n) => {
      const username = `load${n}`;
      const reply = await json(running.base, "POST", "/svc-api/v1/users/create", {
        username,
        email: `${username}@example.com`,
        password: "correct horse",
      });
      return reply.status === 201 ? username : null;
    });

    const again = await start(dir);
    const login = await json(again.base, "POST", "/svc-api/v1/auth/login", {
      username: acknowledged[0],
      password: "correct horse",
    });
    const listed = await json(again.base, "GET", "/svc-api/v1/users/all?limit=1000", undefined, login.body.token);
    const stored = new Set(listed.body.map((u: { username: string }) => u.username));
    expect(acknowledged.filter((name) => !stored.has(name))).toEqual([]);
    expect(await stop(again)).toBe(0);
  }, 60_000);

  test("every acknowledged write survives kill -9 when writes commit in groups (64 clients at once)", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir);
    const writer = { username: "writer", email: "writer@example.com", password: "correct horse" };
    expect((await json(running.base, "POST", "/svc-api/v1/users/create", writer)).status).toBe(201);
    const credentials = { username: writer.username, password: writer.password };
    const { token } = (await json(running.base, "POST", "/svc-api/v1/auth/login", credentials)).body;
    // Sixty-four clients create categories, one statement each, which SQLite commits in groups.
    const acknowledged = await killedMidStream(running, { clients: 64, atLeast: 200 }, async (n) => {
      const query = `mutation { createCategory(input: { name: "burst ${n}" }) { id } }`;
      const reply = await json(running.base, "POST", "/graphql", { query }, token);
      return reply.body?.data?.createCategory?.id ?? null;
    });

    const again = await start(dir);
    const login = await json(again.base, "POST", "/svc-api/v1/auth/login", credentials);
    const listed = await json(
      again.base,
      "POST",
      "/graphql",
      { query: "{ listAllCategories { id } }" },
      login.body.token,
    );
    const stored = new Set(listed.body.data.listAllCategories.map((c: { id: string }) => c.id));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(await stop(again)).toBe(0);
  }, 60_000);

  test("after kill -9, deleting svc.db starts afresh: the WAL left behind is set aside, with a warning, not replayed", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir);
    const ann = { username: "ann", email: "ann@example.com", password: "correct horse" };
    expect((await json(running.base, "POST", "/svc-api/v1/users/create", ann)).status).toBe(201);
    running.proc.kill("SIGKILL");
    await running.proc.exited;
    expect(existsSync(join(dir, "data", "svc.db-wal"))).toBe(true);
    rmSync(join(dir, "data", "svc.db"));

    const again = await start(dir);
    // Ann was in the deleted database only: her name is free again.
    expect((await json(again.base, "POST", "/svc-api/v1/users/create", ann)).status).toBe(201);
    const aside = readdirSync(join(dir, "data")).filter((name) => name.includes(".orphaned-"));
    expect(aside).toEqual([expect.stringMatching(/^svc\.db-wal\.orphaned-\d{8}T\d{6}Z$/)]);
    const warning = again
      .output()
      .split("\n")
      .find((line) => line.includes("set aside"));
    expect(JSON.parse(warning!)).toMatchObject({ level: "warn", set_aside: [join("data", aside[0]!)] });
    expect(await stop(again)).toBe(0);
  }, 30_000);

  test("a SIGTERM the moment svc says it listens stops it cleanly (exit 0), every time", async () => {
    const dir = emptyFolderWithBinary();
    const codes: number[] = [];
    for (let i = 0; i < 15; i++) {
      const running = await start(dir);
      running.proc.kill("SIGTERM");
      codes.push(await running.proc.exited);
    }
    expect(codes).toEqual(Array(15).fill(0));
  }, 60_000);

  test("a second svc on a taken port exits 1 with one line, unless SVC_REUSE_PORT=true", async () => {
    const first = await start(emptyFolderWithBinary(), { SVC_HOST: "0.0.0.0" });
    const port = new URL(first.base).port;
    const dir = emptyFolderWithBinary();
    const env = { PATH: process.env.PATH ?? "", SVC_HOST: "0.0.0.0", SVC_PORT: port, SVC_JWT_SECRET: SECRET };
    const second = await runProcess(svcIn(dir), { cwd: dir, env, timeoutMs: 10_000 });
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(`svc: cannot listen on 0.0.0.0:${port}: `);
    expect(lines[0]).toContain("SVC_REUSE_PORT");

    expect(await stop(first)).toBe(0);

    // Sharing on purpose: every process on the port opts in.
    const shared = { SVC_HOST: "0.0.0.0", SVC_REUSE_PORT: "true" };
    const one = await start(emptyFolderWithBinary(), shared);
    const two = await start(dir, { ...shared, SVC_PORT: new URL(one.base).port });
    expect((await json(two.base, "GET", "/svc/health")).status).toBe(200);
    expect(await stop(two)).toBe(0);
    expect(await stop(one)).toBe(0);
  }, 30_000);

  test("a start-up failure is one line with its cause, and exit 1", async () => {
    const dir = emptyFolderWithBinary();
    const failing = async (env: Record<string, string>) => {
      const proc = await runProcess(svcIn(dir), {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", ...env },
        timeoutMs: 15_000,
      });
      return { code: proc.code, lines: proc.stderr.trim().split("\n") };
    };
    const expectOneLine = async (env: Record<string, string>, cause: string) => {
      const { code, lines } = await failing(env);
      expect({ code, lines: lines.length }).toEqual({ code: 1, lines: 1 });
      expect(lines[0]).toContain(cause);
      // The statement, if named at all, comes after the cause.
      if (lines[0]!.includes("Failed query"))
        expect(lines[0]!.indexOf(cause)).toBeLessThan(lines[0]!.indexOf("Failed query"));
    };
    await expectOneLine(
      { SVC_HOST: "256.1.1.1" },
      "svc: cannot listen on 256.1.1.1:0: SVC_HOST is not an address or a host name this machine can resolve",
    );
    await expectOneLine(
      { SVC_HOST: "192.0.2.1" },
      "svc: cannot listen on 192.0.2.1:0: SVC_HOST is not an address of this machine",
    );
    if (!pgAvailable) return;
    // A role that may connect but not create svc's tables: the cause must show, not just "Failed query: CREATE …".
    const database = await createTestDatabase("nopriv");
    const role = `svc_nopriv_${process.pid}`;
    const admin = new SQL({ url: database.url, max: 1 });
    await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
    await admin.close();
    try {
      const url = new URL(database.url);
      url.username = role;
      await expectOneLine({ SVC_DATABASE_URL: url.toString() }, "permission denied");
    } finally {
      await database.drop();
      const cleanup = new SQL({ url: database.url.replace(/\/[^/]+$/, "/postgres"), max: 1 });
      await cleanup.unsafe(`DROP ROLE IF EXISTS ${role}`);
      await cleanup.close();
    }
  }, 60_000);
});

/**
 * Has `clients` writers call `write` (with a running number, up to `limit` calls) against `running` until
 * `atLeast` writes are acknowledged, then kills it with SIGKILL; answers what `write` returned for the writes
 * acknowledged (null: refused). A write whose connection died with the process is not acknowledged.
 */
async function killedMidStream(
  running: Awaited<ReturnType<typeof start>>,
  { clients, atLeast, limit = Infinity }: { clients: number; atLeast: number; limit?: number },
  write: (n: number) => Promise<string | null>,
): Promise<string[]> {
  const acknowledged: string[] = [];
  let next = 0;
  let killed = false;
  const client = async () => {
    while (!killed && next < limit) {
      try {
        const key = await write(next++);
        if (key !== null) acknowledged.push(key);
      } catch {
        return; // the connection died with the process: not acknowledged
      }
    }
  };
  const writers = Array.from({ length: clients }, client);
  await waitUntil(() => acknowledged.length >= atLeast, { what: `${atLeast} writes acknowledged`, everyMs: 5 });
  running.proc.kill("SIGKILL");
  killed = true;
  await Promise.all(writers);
  expect(await running.proc.exited).not.toBe(0);
  return acknowledged;
}
