// `bun bench/health-cpu.ts <binary>[:NAME=value,...] ...`: where a health probe's CPU goes over HTTP. Each
// variant (a compiled svc, with settings such as SVC_LOG_PROBES=false) is started in a fresh folder, has its
// app loaded by one other request (as `bun run bench` does by logging in), and is probed by wrk (1 thread,
// 64 connections, 3 s after 1 s unmeasured); its CPU time (all threads) over the requests answered is the
// figure. The variants run in turn, ROUNDS times, so that other load on the machine falls on all of them:
// compare the best and the spread, never one run. bench/results.md, "Health probe, where the time goes".
import { $ } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cpuSeconds } from "./footprint.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SECONDS = 3;

const variants = process.argv.slice(2).map((arg) => {
  const [binary, settings = ""] = arg.split(":");
  const env = Object.fromEntries(
    settings ? settings.split(",").map((pair) => pair.split("=") as [string, string]) : [],
  );
  return { name: arg, binary: resolve(binary!), env };
});
if (variants.length === 0) {
  console.error("usage: bun bench/health-cpu.ts <binary>[:NAME=value,...] ...");
  process.exit(2);
}

async function measure(binary: string, env: Record<string, string>): Promise<{ rps: number; cpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), "svc-health-cpu-"));
  const log = join(dir, "svc.log");
  const proc = Bun.spawn([binary], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      SVC_HOST: "127.0.0.1",
      SVC_PORT: "0",
      SVC_JWT_SECRET: "bench-secret: 0123456789 ABCDEFGHIJ klmnop",
      ...env,
    },
    // The access lines go to a file, as in `bun run bench`.
    stdout: Bun.file(log),
    stderr: "inherit",
  });
  try {
    let line: string | undefined;
    while (
      !(line = (existsSync(log) ? readFileSync(log, "utf8") : "").split("\n").find((l) => l.includes("svc listening")))
    )
      await Bun.sleep(5);
    const base: string = JSON.parse(line).address;
    // Any request but a probe loads the app; until then serve.ts answers the probes itself.
    await (await fetch(`${base}/svc/no-such-path`)).arrayBuffer();
    await $`wrk -t1 -c64 -d1s ${base}/svc/health`.quiet();
    const before = cpuSeconds(proc.pid);
    const out = await $`wrk -t1 -c64 -d${SECONDS}s ${base}/svc/health`.quiet().text();
    const requests = Number(/(\d+) requests in/.exec(out)![1]);
    return {
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
      cpu: ((cpuSeconds(proc.pid) - before) * 1e6) / requests,
    };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = new Map<string, { rps: number; cpu: number }[]>(variants.map((v) => [v.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  // Who goes first turns round each round.
  const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
  for (const v of order) {
    const result = await measure(v.binary, v.env);
    results.get(v.name)!.push(result);
    console.log(
      `round ${round + 1} ${v.name}: ${result.rps.toFixed(0)} req/s, ${result.cpu.toFixed(1)} µs CPU a request`,
    );
  }
}
for (const [name, runs] of results) {
  const cpu = runs.map((r) => r.cpu).sort((a, b) => a - b);
  const rps = runs.map((r) => r.rps).sort((a, b) => b - a);
  console.log(
    `${name}: CPU µs a request best ${cpu[0]!.toFixed(1)}, median ${cpu[Math.floor(cpu.length / 2)]!.toFixed(1)}, worst ${cpu.at(-1)!.toFixed(1)}; req/s best ${rps[0]!.toFixed(0)}, median ${rps[Math.floor(rps.length / 2)]!.toFixed(0)}`,
  );
}
