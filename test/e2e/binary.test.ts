// Drives the compiled binary: built once, copied alone into an empty folder, started for real.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient as createWsClient } from "graphql-ws";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Glob, SQL, type Subprocess } from "bun";
import { freePort } from "../ports.ts";
import { compiledBinary } from "./support/binary.ts";
import { createTestDatabase, postgresAvailable } from "../postgres.ts";

const SECRET = "binary-test-secret-of-at-least-32-bytes";
const pgAvailable = await postgresAvailable();
let workdir: string;
let binary: string;

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), "svc-binary-"));
  binary = await compiledBinary();
}, 120_000);

afterAll(() => rmSync(workdir, { recursive: true, force: true }));

/** An empty folder holding nothing but a copy of the binary. */
function emptyFolderWithBinary(): string {
  const dir = mkdtempSync(join(workdir, "run-"));
  copyFileSync(binary, join(dir, "svc"));
  Bun.spawnSync(["chmod", "+x", join(dir, "svc")]);
  return dir;
}

interface Running {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  base: string;
  output: () => string;
}

async function start(dir: string, env: Record<string, string> = {}): Promise<Running> {
  const proc = Bun.spawn([join(dir, "svc")], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_JWT_SECRET: SECRET, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const decoder = new TextDecoder();
  const reader = proc.stdout.getReader();
  const deadline = Date.now() + 10_000;
  while (!text.includes('"svc listening"')) {
    if (Date.now() > deadline) throw new Error(`svc did not start: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`svc exited before listening: ${text}${await new Response(proc.stderr).text()}`);
    text += decoder.decode(value);
  }
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value);
    }
  })();
  const line = JSON.parse(text.split("\n").find((l) => l.includes('"svc listening"'))!);
  return { proc, base: line.address.replace("0.0.0.0", "127.0.0.1"), output: () => text };
}

async function stop(running: Running): Promise<number> {
  running.proc.kill("SIGTERM");
  return running.proc.exited;
}

async function json(base: string, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe("the compiled binary, alone in an empty folder", () => {
  test("creates data/svc.db, serves every surface, and keeps data across a restart", async () => {
    const dir = emptyFolderWithBinary();
    const first = await start(dir);
    expect(existsSync(join(dir, "data", "svc.db"))).toBe(true);
    // Written whole from the image the build made: the scratch file it went through is gone.
    expect(readdirSync(join(dir, "data")).filter((name) => !name.startsWith("svc.db-"))).toEqual(["svc.db"]);

    const health = await json(first.base, "GET", "/svc/health");
    expect(health.status).toBe(200);
    expect(health.headers.get("server")).toBeNull();
    expect(health.headers.get("x-powered-by")).toBeNull();
    expect(health.body).toMatchObject({
      service: "svc",
      environment: "development",
      database_kind: "sqlite",
      status: "ok",
      checks: { database: "ok" },
    });

    // The admin console, built into the binary: the page and both of its assets.
    const consolePage = await fetch(`${first.base}/svc/admin`);
    expect(consolePage.status).toBe(200);
    expect(consolePage.headers.get("content-security-policy")).toContain("default-src 'self'");
    const assets = [...(await consolePage.text()).matchAll(/(?:src|href)="(\/svc\/admin\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const reply = await fetch(`${first.base}${asset}`);
      expect(reply.status).toBe(200);
      expect((await reply.text()).length).toBeGreaterThan(1000);
    }

    const created = await json(first.base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    expect(created.status).toBe(201);
    const login = await json(first.base, "POST", "/svc-api/v1/auth/login", {
      username: "ann",
      password: "correct horse",
    });
    expect(login.status).toBe(200);
    const token = login.body.token;
    expect((await json(first.base, "GET", "/svc-api/v1/users/all", undefined, token)).body).toHaveLength(1);

    const mutation = await json(
      first.base,
      "POST",
      "/graphql",
      { query: 'mutation { createCategory(input: { name: "Books" }) { id colorHex } }' },
      token,
    );
    expect(mutation.body.data.createCategory.colorHex).toBe("#64748B");

    const playground = await fetch(`${first.base}/graphql/playground`);
    expect(playground.status).toBe(200);
    expect(await playground.text()).toContain("YogaGraphiQL");

    // The REST reference and its assets, metrics and probes come from inside the binary too.
    expect((await json(first.base, "GET", "/svc-api/openapi.json")).body.openapi).toBe("3.1.0");
    expect((await fetch(`${first.base}/svc-api/docs`)).status).toBe(200);
    const bundle = await fetch(`${first.base}/svc-api/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
    expect((await fetch(`${first.base}/svc-api/docs/assets/swagger-ui.css`)).status).toBe(200);
    expect(await (await fetch(`${first.base}/svc/metrics`)).text()).toContain("svc_http_requests_total");
    expect((await json(first.base, "GET", "/svc/health/ready")).status).toBe(200);
    expect((await json(first.base, "GET", "/svc/health/live")).body).toEqual({ status: "ok" });

    expect(await stop(first)).toBe(0);
    expect(first.output()).toContain('"svc stopped"');

    const second = await start(dir);
    // Same secret, same database: the token from before the restart still works.
    const list = await json(second.base, "POST", "/graphql", { query: "{ categories { name } }" }, token);
    expect(list.body).toEqual({ data: { categories: [{ name: "Books" }] } });
    expect(
      (await json(second.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" }))
        .status,
    ).toBe(200);
    expect(await stop(second)).toBe(0);
  }, 30_000);

  test("answers bodies past SVC_MAX_BODY_BYTES with 413, declared or chunked", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir, { SVC_MAX_BODY_BYTES: "2048" });
    const big = JSON.stringify({ username: "x".repeat(3000) });
    const declared = await fetch(`${running.base}/svc-api/v1/users/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { code: string }).code).toBe("payload_too_large");
    const chunked = await fetch(`${running.base}/svc-api/v1/users/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([big]).stream(),
    });
    expect(chunked.status).toBe(413);
    const huge = await fetch(`${running.base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(10_000),
    });
    expect(huge.status).toBe(413);
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("Node's fetch uploading 20 MiB reads the 413 every time, not EPIPE; so does curl with Expect: 100-continue", async () => {
    const running = await start(emptyFolderWithBinary());
    const script = `
      const results = [];
      for (let i = 0; i < 10; i++) {
        try {
          const r = await fetch(${JSON.stringify(`${running.base}/svc-api/v1/users/create`)}, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(20 * 1024 * 1024) });
          results.push(r.status + " " + (await r.json()).code);
        } catch (e) { results.push("error " + (e.cause?.code ?? e.message)); }
      }
      console.log(JSON.stringify(results));`;
    const node = Bun.spawn(["node", "--input-type=module", "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(await node.exited).toBe(0);
    expect(JSON.parse(await new Response(node.stdout).text())).toEqual(Array(10).fill("413 payload_too_large"));

    const body = join(workdir, "20MiB.json");
    await Bun.write(body, "x".repeat(20 * 1024 * 1024));
    const curl = Bun.spawnSync([
      "curl",
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      "content-type: application/json",
      "-H",
      "expect: 100-continue",
      "--data-binary",
      `@${body}`,
      `${running.base}/svc-api/v1/users/create`,
    ]);
    expect(curl.stdout.toString()).toBe("413");
    expect(await stop(running)).toBe(0);
  }, 60_000);

  test("compiled with svc's flags, an error keeps its class's name and its stack names svc's functions and files", async () => {
    // A small program of svc's own modules, built as the binary is (src/build/flags.ts): a logged error's
    // `type` is what an operator greps for, and a minified name ("Ke") says nothing.
    const dir = mkdtempSync(join(workdir, "names-"));
    const src = join(import.meta.dir, "..", "..", "src");
    await Bun.write(
      join(dir, "entry.ts"),
      `import { AppError } from ${JSON.stringify(join(src, "errors.ts"))};
import { safeError } from ${JSON.stringify(join(src, "safe-errors.ts"))};
function failingStep() { throw new AppError("database_unavailable"); }
try { failingStep(); } catch (error) { console.log(JSON.stringify(safeError(error))); }
`,
    );
    const { COMPILE_FLAGS } = await import("../../src/build/flags.ts");
    const build = Bun.spawnSync(
      [process.execPath, "build", ...COMPILE_FLAGS, join(dir, "entry.ts"), "--outfile", join(dir, "names")],
      {
        cwd: dir,
        stderr: "pipe",
      },
    );
    expect(build.stderr.toString()).toBe("");
    const logged = JSON.parse(Bun.spawnSync([join(dir, "names")]).stdout.toString());
    expect(logged.type).toBe("AppError");
    expect(logged.stack).toStartWith("AppError: ");
    expect(logged.stack).toMatch(/at failingStep \(.*entry\.ts:3:/);
  }, 60_000);

  test("SIGHUP on plain HTTP is logged and ignored: svc keeps serving, and SIGTERM still stops it", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir);
    for (let i = 1; i <= 2; i++) {
      running.proc.kill("SIGHUP");
      const heard = () => running.output().split('"msg":"SIGHUP: nothing to reload"').length - 1;
      while (heard() < i && running.proc.exitCode === null) await Bun.sleep(1);
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
      while (started() < count) await Bun.sleep(1);
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
    const acknowledged: string[] = [];
    let next = 0;
    let killed = false;
    // Eight clients sign up as fast as they can; the process is killed mid-stream.
    const client = async () => {
      while (!killed && next < 2000) {
        const username = `load${next++}`;
        try {
          const reply = await json(running.base, "POST", "/svc-api/v1/users/create", {
            username,
            email: `${username}@example.com`,
            password: "correct horse",
          });
          if (reply.status === 201) acknowledged.push(username);
        } catch {
          return; // the connection died with the process: not acknowledged
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    while (acknowledged.length < 40) await Bun.sleep(5);
    running.proc.kill("SIGKILL");
    killed = true;
    await Promise.all(clients);
    expect(await running.proc.exited).not.toBe(0);

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

  test("refuses to start on a bad setting, with one line naming the variable", async () => {
    const dir = emptyFolderWithBinary();
    const cases: Array<[Record<string, string>, string]> = [
      [{ SVC_PORT: "eighty" }, "SVC_PORT"],
      [{ SVC_ENV: "production", SVC_JWT_SECRET: "" }, "SVC_JWT_SECRET"],
      [{ SVC_GRAPHQL_AUTH: "maybe" }, "SVC_GRAPHQL_AUTH"],
    ];
    for (const [env, variable] of cases) {
      const proc = Bun.spawnSync([join(dir, "svc")], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", ...env },
      });
      expect(proc.exitCode).toBe(2);
      const lines = proc.stderr.toString().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`svc: ${variable}: `);
    }
    expect(existsSync(join(dir, "data"))).toBe(false);
  }, 30_000);

  test("GraphQL syntax errors and limit refusals are the client's, not the server's: their codes, and no error log line", async () => {
    const running = await start(emptyFolderWithBinary(), { SVC_GRAPHQL_AUTH: "off" });
    const ask = async (query: string, accept: string) => {
      const response = await fetch(`${running.base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", accept },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: await response.json() };
    };
    const syntax = await ask("{ categories { id ", "application/graphql-response+json");
    expect(syntax).toEqual({
      status: 400,
      body: {
        errors: [
          {
            message: "Syntax Error: Expected Name, found <EOF>.",
            locations: [{ line: 1, column: 19 }],
            extensions: { code: "GRAPHQL_PARSE_FAILED" },
          },
        ],
      },
    });
    expect((await ask("{ categories { id ", "application/json")).body.errors[0].extensions.code).toBe(
      "GRAPHQL_PARSE_FAILED",
    );
    const tokens = await ask(`{ categories { ${"id ".repeat(1000)} } }`, "application/graphql-response+json");
    expect({ status: tokens.status, code: tokens.body.errors[0].extensions.code }).toEqual({
      status: 400,
      code: "QUERY_LIMIT_EXCEEDED",
    });
    const aliases = await ask(
      `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: categories { id }`).join(" ")} }`,
      "application/graphql-response+json",
    );
    expect({ status: aliases.status, code: aliases.body.errors[0].extensions.code }).toEqual({
      status: 400,
      code: "QUERY_LIMIT_EXCEEDED",
    });
    expect(await stop(running)).toBe(0);
    expect(
      running
        .output()
        .split("\n")
        .filter((line) => line.includes('"level":"error"')),
    ).toEqual([]);
  }, 30_000);

  test("from the moment it listens, before its app has loaded: probes answer, other requests wait for the app, none refused", async () => {
    // A fixed port, so that requests can be sent before svc says where it listens.
    const port = freePort();
    const dir = emptyFolderWithBinary();
    const proc = Bun.spawn([join(dir, "svc")], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_PORT: String(port), SVC_HOST: "127.0.0.1", SVC_JWT_SECRET: SECRET },
      stdout: "ignore",
      stderr: "pipe",
    });
    // Until each has an answer: every attempt before the socket opens is refused by the kernel, none after.
    const firstAnswer = async (path: string): Promise<number> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const status = await fetch(`http://127.0.0.1:${port}${path}`).then(
          (r) => r.status,
          (error: { code?: string }) => (error.code === "ECONNREFUSED" ? null : Promise.reject(error)),
        );
        if (status !== null) return status;
        if (Date.now() > deadline || proc.exitCode !== null) throw new Error("svc did not answer");
        await Bun.sleep(1);
      }
    };
    try {
      const [health, me, graphql] = await Promise.all([
        firstAnswer("/svc/health"),
        firstAnswer("/svc-api/v1/users/me"),
        firstAnswer("/graphql?query=%7B__typename%7D"),
      ]);
      // The app's own answers (a token is missing), not a 404 or a 503 from a half-started server.
      expect({ health, me, graphql }).toEqual({ health: 200, me: 401, graphql: 401 });
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await proc.exited).toBe(0);
  });

  test("an idle svc answers its probes (access lines included) without loading the app; the first other request loads it, once", async () => {
    const running = await start(emptyFolderWithBinary(), { SVC_LOG_LEVEL: "debug" });
    const lines = () =>
      running
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map(
          (l) =>
            JSON.parse(l) as {
              msg: string;
              route?: string;
              status?: number;
              bytecode?: { hot: number; cold: number; unknown: number };
            },
        );
    try {
      for (const path of ["/svc/health", "/svc/health/live", "/svc/health/ready"])
        expect((await fetch(`${running.base}${path}`)).status).toBe(200);
      await Bun.sleep(300); // access lines are written in batches, every 100 ms at most
      expect(
        lines()
          .filter((l) => l.msg === "request completed")
          .map((l) => [l.route, l.status]),
      ).toEqual([
        ["/svc/health", 200],
        ["/svc/health/live", 200],
        ["/svc/health/ready", 200],
      ]);
      expect(lines().filter((l) => l.msg === "app loaded")).toHaveLength(0);

      // The first other request waits for the app, then gets its answer; later ones find it there.
      const first = await Promise.all([1, 2, 3].map(() => fetch(`${running.base}/svc-api/v1/users/me`)));
      expect(first.map((r) => r.status)).toEqual([401, 401, 401]);
      expect((await fetch(`${running.base}/svc-api/v1/users/all`)).status).toBe(401);
      expect((await fetch(`${running.base}/svc/health`)).status).toBe(200);
      await Bun.sleep(300);
      const loaded = lines().filter((l) => l.msg === "app loaded");
      expect(loaded).toHaveLength(1);
      // The build laid the bytecode out by a profile of its own (src/build/bytecode-order.ts), and
      // that profile covers what the app loads.
      const { hot, cold, unknown } = loaded[0]!.bytecode!;
      expect(hot).toBeGreaterThan(500);
      expect(unknown).toBe(0);
      expect(cold / (hot + cold)).toBeLessThan(0.05);
    } finally {
      expect(await stop(running)).toBe(0);
    }
    expect(lines().at(-1)?.msg).toBe("svc stopped");
  });

  test("restarted on its database, svc listens having compiled no JavaScript (nothing before it loads node:fs or JITs)", async () => {
    // What an idle box holds: a start that reaches the JIT, or node:fs (whose loading names a hundred
    // functions, which does), holds more; docs/performance.md, "Footprint". JavaScriptCore reports each compilation.
    const dir = emptyFolderWithBinary();
    expect(await stop(await start(dir))).toBe(0);
    const running = await start(dir, { BUN_JSC_reportBaselineCompileTimes: "true" });
    expect(await stop(running)).toBe(0);
    const compiled = (await new Response(running.proc.stderr).text())
      .split("\n")
      .filter((l) => l.startsWith("Optimized"));
    expect(compiled).toEqual([]);
    // The switch is read: the first request that loads the app does compile.
    const loaded = await start(dir, { BUN_JSC_reportBaselineCompileTimes: "true" });
    expect((await fetch(`${loaded.base}/svc-api/v1/users/me`)).status).toBe(401);
    expect(await stop(loaded)).toBe(0);
    expect(await new Response(loaded.proc.stderr).text()).toContain("Optimized");
  });

  test("a WebSocket subscription can be the request that loads the app", async () => {
    const running = await start(emptyFolderWithBinary());
    try {
      const ws = new WebSocket(`${running.base.replace("http", "ws")}/graphql`, "graphql-transport-ws");
      const opened = await new Promise<string>((resolve, reject) => {
        ws.onopen = () => resolve(ws.protocol);
        ws.onerror = () => reject(new Error("the upgrade failed"));
      });
      expect(opened).toBe("graphql-transport-ws");
      // Without a token the app's own refusal comes, on the socket the loaded app took over.
      const closed = new Promise<number>((resolve) => {
        ws.onclose = (event) => resolve(event.code);
      });
      ws.send(JSON.stringify({ type: "connection_init", payload: {} }));
      expect(await closed).toBe(4403);
    } finally {
      expect(await stop(running)).toBe(0);
    }
  });

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
    const second = Bun.spawn([join(dir, "svc")], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => second.kill("SIGKILL"), 10_000);
    expect(await second.exited).toBe(1);
    clearTimeout(timer);
    const lines = (await new Response(second.stderr).text()).trim().split("\n");
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

  test("pushes category changes over SSE (curl's way) and WebSocket (graphql-ws's client); SIGTERM completes both streams and exits 0", async () => {
    const running = await start(emptyFolderWithBinary());
    const user = { username: "rita", email: "rita@example.com", password: "correct horse" };
    await json(running.base, "POST", "/svc-api/v1/users/create", user);
    const { body } = await json(running.base, "POST", "/svc-api/v1/auth/login", {
      username: user.username,
      password: user.password,
    });
    const query = "subscription { categoryEvents { kind category { name } } }";
    const curl = Bun.spawn(
      [
        "curl",
        "-sS",
        "-N",
        `${running.base}/graphql`,
        "-H",
        `Authorization: Bearer ${body.token}`,
        "-H",
        "Content-Type: application/json",
        "-H",
        "Accept: text/event-stream",
        "-d",
        JSON.stringify({ query }),
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const socket = createWsClient({
      url: `${running.base.replace("http", "ws")}/graphql`,
      connectionParams: { Authorization: `Bearer ${body.token}` },
      retryAttempts: 0,
    });
    const received: unknown[] = [];
    const completed = new Promise((resolve, reject) =>
      socket.subscribe(
        { query },
        { next: (r) => received.push(r.data), error: reject, complete: () => resolve("complete") },
      ),
    );
    // Both open (as the metrics count them), then one change.
    for (let i = 0; i < 100; i++) {
      const metrics = await (await fetch(`${running.base}/svc/metrics`)).text();
      if (/svc_subscriptions_open\{transport="sse".*\} 1\n/.test(metrics) && /transport="ws".*\} 1\n/.test(metrics))
        break;
      await Bun.sleep(50);
    }
    await json(
      running.base,
      "POST",
      "/graphql",
      { query: 'mutation { createCategory(input: { name: "Pushed" }) { id } }' },
      body.token,
    );
    for (let i = 0; received.length === 0 && i < 50; i++) await Bun.sleep(20);
    expect(received[0]).toEqual({
      categoryEvents: { kind: "CREATED", category: { name: expect.stringMatching(/^Pushed/) } },
    });
    expect(await stop(running)).toBe(0);
    expect(await completed).toBe("complete");
    expect(await curl.exited).toBe(0);
    const stream = await new Response(curl.stdout).text();
    expect(stream).toContain('event: next\ndata: {"data":{"categoryEvents":{"kind":"CREATED"');
    expect(stream).toEndWith("event: complete\ndata:\n\n");
    await socket.dispose();
  }, 30_000);

  test("the walkthrough: the README's Quick start and the docs pages' examples, pasted in order, all work", async () => {
    // The blocks marked <!-- walkthrough … --> go on from one another, page by page in this order, as a reader
    // pasting them into one shell would: the REST page sets the variables the others use.
    const root = join(import.meta.dir, "..", "..");
    const WALKTHROUGH: [page: string, blocks: number][] = [
      ["README.md", 1],
      ["docs/rest.md", 1],
      ["docs/sessions.md", 1],
      ["docs/graphql.md", 1],
      ["docs/retries.md", 1],
      ["docs/administration.md", 1],
    ];
    const marked = (text: string) =>
      [...text.matchAll(/<!-- walkthrough[^>]*-->\n```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    // A page with a walkthrough block that is not in the list would be skipped silently: it must be listed.
    const pages = ["README.md", ...[...new Glob("docs/*.md").scanSync(root)]];
    const withBlocks = pages.filter((page) => readFileSync(join(root, page), "utf8").includes("<!-- walkthrough"));
    expect(withBlocks.sort()).toEqual(WALKTHROUGH.map(([page]) => page).sort());
    const blocks = WALKTHROUGH.flatMap(([page, count]) => {
      const found = marked(readFileSync(join(root, page), "utf8"));
      expect({ page, blocks: found.length }).toEqual({ page, blocks: count });
      return found;
    });
    const dir = emptyFolderWithBinary();
    const running = await start(dir);
    // In the binary's folder, with it on the PATH: the administration block runs `svc` on the same database.
    const script = Bun.spawnSync(["bash", "-c", `set -euo pipefail\n${blocks.join("\n")}`], {
      cwd: dir,
      env: { PATH: `${dir}:${process.env.PATH ?? ""}`, SVC: running.base },
    });
    const out = script.stdout.toString();
    // Nothing on stderr but the commands on the box naming the database they used.
    const database = `sqlite:${join(realpathSync(dir), "data", "svc.db")}`;
    expect({ code: script.exitCode, stderr: script.stderr.toString().split("\n").filter(Boolean) }).toEqual({
      code: 0,
      stderr: [`svc admin: using ${database}`, `svc audit: using ${database}`],
    });
    // One error only, and on purpose: the stale ifVersion of the retries block.
    expect(out.match(/"errors"/g)).toHaveLength(1);
    expect(out).toContain('{"errors":[{"message":"The category changed since you read it: it is at version 2.');
    expect(out).toContain('"extensions":{"currentVersion":2,"code":"CONFLICT","reason":"version_mismatch"}');
    expect(out.match(/HTTP\/1\.1 \d+/g)).toEqual(["HTTP/1.1 201", "HTTP/1.1 200", "HTTP/1.1 204", "HTTP/1.1 204"]);
    // The README's Quick start: a first category, then the list with it.
    expect(out).toContain('{"data":{"categories":[{"id":"');
    expect(out).toContain('"name":"Books","colorHex":"#64748B","icon":"book","createdBy":"');
    // The retries block: a replayed sign-up, a 304, an If-Match that wins and one that is stale.
    expect(out).toContain("201 replayed=\n201 replayed=true\n");
    expect(out).toContain("\n304\n");
    expect(out).toContain('"username":"Ann"');
    expect(out).toContain('"code":"precondition_failed"}\n412\n');
    expect(out).toContain('{"data":{"updateCategory":{"version":2}}}');
    expect(out).toContain('"email":"ann@example.org"');
    expect(out).toContain('"description":"Trips"');
    expect(out).toContain('{"data":{"deleteCategory":true}}');
    expect(out).toContain("created administrator root");
    expect(out).toContain('"status":"disabled"');
    expect(out).toContain('"action":"password_reset.redeemed"');
    expect(out).toContain("password_reset.redeemed  success  actor=");
    // An account an administrator made, and an invitation for dee, shown once and listed without its code.
    expect(out).toContain('"username":"cyd","email":"cyd@example.com","role":"user"');
    const invitation = /"code":"([0-9A-Z-]{39})","email":"dee@example.com"/.exec(out);
    expect(invitation).not.toBeNull();
    expect(out.split(invitation![1]!)).toHaveLength(2);
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("a start-up failure is one line with its cause, and exit 1", async () => {
    const dir = emptyFolderWithBinary();
    const failing = async (env: Record<string, string>) => {
      const proc = Bun.spawn([join(dir, "svc")], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      const code = await proc.exited;
      clearTimeout(timer);
      return { code, lines: (await new Response(proc.stderr).text()).trim().split("\n") };
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

  test("in production, the playground is 404 and introspection is refused", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir, { SVC_ENV: "production" });
    expect((await fetch(`${running.base}/graphql/playground`)).status).toBe(404);
    await json(running.base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    const token = (
      await json(running.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" })
    ).body.token;
    const introspection = await json(
      running.base,
      "POST",
      "/graphql",
      { query: "{ __schema { types { name } } }" },
      token,
    );
    expect(introspection.body.data).toBeUndefined();
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test.skipIf(!pgAvailable)(
    "serves from PostgreSQL, and `svc copy` moves SQLite → PostgreSQL → SQLite with logins, tokens, sessions, roles and the audit log intact",
    async () => {
      const dir = emptyFolderWithBinary();
      const database = await createTestDatabase("binary");
      try {
        const onSqlite = await start(dir);
        await json(onSqlite.base, "POST", "/svc-api/v1/users/create", {
          username: "ann",
          email: "ann@example.com",
          password: "correct horse",
        });
        const { token, refresh_token: refresh } = (
          await json(onSqlite.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" })
        ).body;
        await json(
          onSqlite.base,
          "POST",
          "/graphql",
          { query: 'mutation { createCategory(input: { name: "Moved" }) { id } }' },
          token,
        );
        expect(await stop(onSqlite)).toBe(0);
        // An administrator made on the box, by the binary.
        const made = Bun.spawnSync(
          [
            join(dir, "svc"),
            "admin",
            "create",
            "--username",
            "root",
            "--email",
            "root@example.com",
            "--password-stdin",
          ],
          { cwd: dir, env: { PATH: process.env.PATH ?? "" }, stdin: Buffer.from("correct horse battery\n") },
        );
        expect(made.exitCode).toBe(0);

        const copy = (from: string, to: string, ...extra: string[]) =>
          Bun.spawnSync([join(dir, "svc"), "copy", "--from", from, "--to", to, ...extra], {
            cwd: dir,
            env: { PATH: process.env.PATH ?? "" },
          });
        // Only serve and migrate make a database: the target first, then the copy.
        const migrate = (url: string) =>
          Bun.spawnSync([join(dir, "svc"), "migrate"], {
            cwd: dir,
            env: { PATH: process.env.PATH ?? "", SVC_DATABASE_URL: url },
          }).exitCode;
        expect(migrate(database.url)).toBe(0);
        const first = copy("sqlite:data/svc.db", database.url);
        expect(first.exitCode).toBe(0);
        expect(first.stderr.toString()).toContain("copied 2 users and 1 categories; counts match the source");
        const again = copy("sqlite:data/svc.db", database.url);
        expect(again.exitCode).toBe(1);
        expect(again.stderr.toString()).toContain("--force");
        expect(copy("sqlite:data/svc.db", database.url, "--force").exitCode).toBe(0);

        const onPostgres = await start(dir, { SVC_DATABASE_URL: database.url });
        expect((await json(onPostgres.base, "GET", "/svc/health")).body.checks).toEqual({
          database: "ok",
          storage: "ok",
        });
        // The token issued on SQLite still works: same secret, same user id and token version.
        expect(
          (await json(onPostgres.base, "POST", "/graphql", { query: "{ categories { name } }" }, token)).body,
        ).toEqual({ data: { categories: [{ name: "Moved" }] } });
        // So does its session: the refresh token rotates on PostgreSQL.
        const renewed = await json(onPostgres.base, "POST", "/svc-api/v1/auth/refresh", { refresh_token: refresh });
        expect(renewed.status).toBe(200);
        expect(
          (
            await json(onPostgres.base, "POST", "/svc-api/v1/auth/login", {
              username: "ann",
              password: "correct horse",
            })
          ).status,
        ).toBe(200);
        const root = await json(onPostgres.base, "POST", "/svc-api/v1/auth/login", {
          username: "root",
          password: "correct horse battery",
        });
        const accounts = await json(onPostgres.base, "GET", "/svc-api/v1/admin/users", undefined, root.body.token);
        expect(accounts.body.map((u: { username: string; role: string }) => `${u.username} ${u.role}`)).toEqual([
          "ann user",
          "root admin",
        ]);
        await json(onPostgres.base, "POST", "/svc-api/v1/users/create", {
          username: "bob",
          email: "bob@example.com",
          password: "correct horse",
        });
        expect(await stop(onPostgres)).toBe(0);

        expect(migrate("sqlite:back/svc.db")).toBe(0);
        const back = copy(database.url, "sqlite:back/svc.db");
        expect(back.exitCode).toBe(0);
        expect(back.stderr.toString()).toContain("copied 3 users and 1 categories");
        // The log made on SQLite and on PostgreSQL came along, in order.
        const audit = Bun.spawnSync([join(dir, "svc"), "audit", "--json", "--action", "user.created"], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? "", SVC_DATABASE_URL: "sqlite:back/svc.db" },
        });
        expect(audit.exitCode).toBe(0);
        const created = audit.stdout
          .toString()
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line));
        expect(created.map((e: { client_address: string }) => e.client_address)).toEqual([
          expect.any(String),
          "cli",
          expect.any(String),
        ]);
        const onCopy = await start(dir, { SVC_DATABASE_URL: "sqlite:back/svc.db" });
        const back2 = await json(onCopy.base, "POST", "/svc-api/v1/auth/refresh", {
          refresh_token: renewed.body.refresh_token,
        });
        expect(back2.status).toBe(200);
        expect(
          (await json(onCopy.base, "POST", "/svc-api/v1/auth/login", { username: "bob", password: "correct horse" }))
            .status,
        ).toBe(200);
        expect(await stop(onCopy)).toBe(0);
      } finally {
        await database.drop();
      }
    },
    60_000,
  );

  test("healthcheck says ready (0) only while svc serves, and backup snapshots the live database", async () => {
    const dir = emptyFolderWithBinary();
    const port = String(freePort());
    const running = await start(dir, { SVC_PORT: port });
    const run = (...args: string[]) =>
      Bun.spawnSync([join(dir, "svc"), ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", SVC_PORT: port } });
    expect(run("healthcheck").exitCode).toBe(0);
    await json(running.base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    const backup = run("backup", "snapshot.db");
    expect(backup.exitCode).toBe(0);
    expect(await stop(running)).toBe(0);
    expect(run("healthcheck").exitCode).toBe(1);

    // Restore: serve from the snapshot.
    const restored = await start(dir, { SVC_DATABASE_URL: "sqlite:snapshot.db" });
    expect(
      (await json(restored.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" }))
        .status,
    ).toBe(200);
    expect(await stop(restored)).toBe(0);
  }, 30_000);

  test("svc copy rejects bad usage with exit code 2", () => {
    const dir = emptyFolderWithBinary();
    const run = (...args: string[]) =>
      Bun.spawnSync([join(dir, "svc"), ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "" } });
    expect(run("copy", "--from", "sqlite:a.db").exitCode).toBe(2);
    expect(run("copy", "--from", "sqlite:a.db", "--to", "sqlite:a.db").exitCode).toBe(2);
    const badUrl = run("copy", "--from", "mysql://u:pw@h/db", "--to", "sqlite:b.db");
    expect(badUrl.exitCode).toBe(2);
    expect(badUrl.stderr.toString()).toContain("--from: ");
    expect(badUrl.stderr.toString()).not.toContain("pw");
    expect(run("frobnicate").exitCode).toBe(2);
    expect(run("--help").exitCode).toBe(0);
  });
});
