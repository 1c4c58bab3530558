// `bun bench/guarantees.ts`: what svc's per-request guarantees cost at the floor itself. A bare Bun.serve
// answers a health-sized body (or a users page's, with --big) in variants that each add one thing every svc
// answer pays for: Elysia's routing and hooks, the peer address (the access line's client_address and
// health's details), a request id, the cache layer's request scope (AsyncLocalStorage), the access line
// written in batches to a file, the socket side channel and the header reads. CPU µs a request under wrk
// (1 thread, 64 connections, 4 s after 1 s unmeasured), the variants in turn, ROUNDS times, each figure
// also as the ratio of the bare server's rate it allows (bare CPU / variant CPU). bench/results.md,
// "#59: what the guarantees cost at the floor".
//
// Run as `[VARIANTS=...] bun bench/guarantees.ts [--big]`; the script starts itself with `--serve <pieces>` for each variant.
import { $ } from "bun";
import { AsyncLocalStorage } from "node:async_hooks";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { cpuSeconds } from "./footprint.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SECONDS = 4;
/** VARIANTS="bare;elysia,scope;..." measures only those (each a comma-separated set of pieces). */
const VARIANTS = process.env.VARIANTS?.split(";") ?? [
  "bare",
  "elysia",
  "peer",
  "id",
  "scope",
  "log",
  "sidechannel,headers",
  "elysia,peer,id,scope,log,sidechannel,headers",
];

/** The body of svc's health answer outside production, or of a users page of 100 (--big). */
function bodyOf(big: boolean): string {
  if (!big)
    return JSON.stringify({
      service: "svc",
      version: "0.2.0",
      environment: "development",
      status: "ok",
      database: { kind: "sqlite", status: "ok" },
      uptime_seconds: 12,
    });
  const at = "2026-11-29T12:00:00.000Z";
  const users = Array.from({ length: 100 }, (_, i) => ({
    id: `0190a8d6-1a2b-7c3d-8e4f-${String(i).padStart(12, "0")}`,
    username: `user${i}`,
    email: `user${i}@example.com`,
    created_at: at,
    updated_at: at,
    role: "user",
    status: "active",
    email_verified: false,
  }));
  return JSON.stringify({ users, next: null });
}

function serve(pieces: Set<string>, big: boolean): void {
  const body = bodyOf(big);
  const scope = new AsyncLocalStorage<{ versions?: number }>();
  const logFile = join(tmpdir(), `svc-guarantees-${process.pid}.log`);
  process.on("exit", () => rmSync(logFile, { force: true }));
  const sink = Bun.file(logFile).writer();
  let held = "";
  const sockets = new WeakMap<Request, { server: unknown }>();
  let server: ReturnType<typeof Bun.serve>;

  function answer(request: Request, set: Record<string, string>): string {
    let address = "127.0.0.1";
    let id = "0190a8d6-1a2b-7c3d-8e4f-5a6b7c8d9e0f";
    const started = performance.now();
    if (pieces.has("sidechannel")) sockets.set(request, { server });
    if (pieces.has("headers")) {
      request.headers.get("x-request-id");
      request.headers.get("content-length");
      request.headers.get("user-agent");
    }
    if (pieces.has("peer")) address = server.requestIP(request)?.address ?? "unknown";
    if (pieces.has("id")) id = Bun.randomUUIDv7();
    set["content-type"] = "application/json";
    set["x-content-type-options"] = "nosniff";
    set["cache-control"] = "no-store";
    set["x-request-id"] = id;
    if (pieces.has("log")) {
      const ms = Math.round((performance.now() - started) * 100) / 100;
      held += `{"level":"info","time":"${new Date().toISOString()}","service":"svc","request_id":"${id}","method":"GET","route":"/svc/health","path":"/svc/health","status":200,"duration_ms":${ms},"client_address":"${address}","user_agent":null,"msg":"request completed"}\n`;
      if (held.length >= 16 * 1024) {
        sink.write(held);
        sink.flush();
        held = "";
      }
    }
    return body;
  }

  let fetch: (request: Request) => Response | Promise<Response>;
  if (pieces.has("elysia")) {
    const app = new Elysia()
      .onRequest(function begin() {})
      .mapResponse({ as: "global" }, function end() {})
      .get("/svc/health", ({ request, set }) => answer(request, set.headers as Record<string, string>));
    fetch = app.fetch;
  } else {
    fetch = (request) => {
      const headers: Record<string, string> = {};
      return new Response(answer(request, headers), { headers });
    };
  }
  const scoped = pieces.has("scope") ? (request: Request) => scope.run({}, () => fetch(request)) : fetch;
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: scoped });
  console.log(`listening ${server.port}`);
}

async function measure(variant: string, big: boolean): Promise<number> {
  const args = [process.execPath, import.meta.path, "--serve", variant, ...(big ? ["--big"] : [])];
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "inherit" });
  try {
    const { value } = await proc.stdout.getReader().read();
    const port = /listening (\d+)/.exec(new TextDecoder().decode(value))?.[1];
    if (!port) throw new Error(`variant ${variant} did not start`);
    const url = `http://127.0.0.1:${port}/svc/health`;
    await $`wrk -t1 -c64 -d1s ${url}`.quiet();
    const before = cpuSeconds(proc.pid);
    const out = await $`wrk -t1 -c64 -d${SECONDS}s ${url}`.quiet().text();
    const requests = Number(/(\d+) requests in/.exec(out)![1]);
    return ((cpuSeconds(proc.pid) - before) * 1e6) / requests;
  } finally {
    proc.kill();
    await proc.exited;
  }
}

const args = process.argv.slice(2);
const big = args.includes("--big");
if (args[0] === "--serve") serve(new Set(args[1] === "bare" ? [] : args[1]!.split(",")), big);
else {
  const figures = new Map<string, number[]>(VARIANTS.map((v) => [v, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const variant of order) figures.get(variant)!.push(await measure(variant, big));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const bare = median(figures.get("bare")!);
  console.log(
    `| Variant (${big ? "a users page, 23 KB" : "a health body"}) | CPU µs a request, median of ${ROUNDS} | rounds | bare / variant |`,
  );
  console.log("|---|---:|---|---:|");
  for (const [variant, values] of figures) {
    const m = median(values);
    console.log(
      `| ${variant === "bare" ? "bare Bun.serve" : `+ ${variant.replaceAll(",", " + ")}`} | ${m.toFixed(2)} | ${values.map((v) => v.toFixed(2)).join(", ")} | ${(bare / m).toFixed(2)} |`,
    );
  }
}
