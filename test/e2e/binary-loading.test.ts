// The compiled binary from the moment it listens: probes before the app loads, an idle svc, a restart that
// compiles nothing, and subscriptions (SSE and WebSocket) through a SIGTERM.
import { beforeAll, describe, expect, test } from "bun:test";
import { createClient as createWsClient } from "graphql-ws";
import { freePort } from "../ports.ts";
import { postgresAvailable } from "../postgres.ts";
import { spawnProcess } from "../support/cli.ts";
import { emptyFolderWithBinary, json, prepareBinary, SECRET, start, stop, svcIn } from "./support/svc.ts";
import { cameToHold, waitUntil } from "../support/wait.ts";

const pgAvailable = await postgresAvailable();

beforeAll(prepareBinary, 120_000);

describe("the compiled binary, alone in an empty folder", () => {
  test("from the moment it listens, before its app has loaded: probes answer, other requests wait for the app, none refused", async () => {
    // A fixed port, so that requests can be sent before svc says where it listens.
    const port = freePort();
    const dir = emptyFolderWithBinary();
    const proc = spawnProcess(svcIn(dir), {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_PORT: String(port), SVC_HOST: "127.0.0.1", SVC_JWT_SECRET: SECRET },
    });
    // Until each has an answer: every attempt before the socket opens is refused by the kernel, none after.
    const firstAnswer = async (path: string): Promise<number> => {
      let status: number | null = null;
      await waitUntil(
        async () => {
          status = await fetch(`http://127.0.0.1:${port}${path}`).then(
            (r) => r.status,
            (error: { code?: string }) => (error.code === "ECONNREFUSED" ? null : Promise.reject(error)),
          );
          if (status === null && proc.exitCode !== null) throw new Error("svc did not answer");
          return status !== null;
        },
        { what: `svc to answer ${path}`, everyMs: 1 },
      );
      return status!;
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
    await waitUntil(
      async () => {
        const metrics = await (await fetch(`${running.base}/svc/metrics`)).text();
        return (
          /svc_subscriptions_open\{transport="sse".*\} 1\n/.test(metrics) && /transport="ws".*\} 1\n/.test(metrics)
        );
      },
      { what: "both subscriptions counted", everyMs: 50 },
    );
    await json(
      running.base,
      "POST",
      "/graphql",
      { query: 'mutation { createCategory(input: { name: "Pushed" }) { id } }' },
      body.token,
    );
    await cameToHold(() => received.length > 0, { timeoutMs: 5000 });
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
});
