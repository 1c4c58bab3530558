// `bun bench/footprint.ts`: the footprint part of `bun run bench` alone, in minutes instead of half an hour.
// The binary's size, exec to the first 200 on /svc/health (a first start in a fresh folder, and a restart on
// its database), RSS at `svc listening` and RSS 5 s after a load, each against the bare compiled Bun.serve of
// bench/bare.ts, measured as bench/run.ts measures them (it takes these functions from here). The load is
// shorter than the full bench's: health, the users page and a few logins. With several --svc binaries (a
// before and an after), every measurement takes them in turns with the bare one.
// `bun run bench:footprint`. Flags: --svc=<binary> (repeatable; this tree's `bun run build` when none), --runs=<n> (3).
import { $, type Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/ports.ts";
import { PASSWORD, seed } from "./seed.ts";

/** Starts per binary for a start-up figure: a start takes 6–25 ms, and one slow start in five moved a median of five by a third. */
export const COLD_STARTS = 9;
/** How long after a load its RSS is read: the allocator returns what a burst took within a few seconds of quiet. */
export const IDLE_AFTER_MS = 5000;

/** The footprint floor (bench/bare.ts), compiled with the flags a lean Bun binary gets, as `out`. */
export async function buildBare(out: string): Promise<string> {
  await $`${process.execPath} build --compile --minify --bytecode ${join(import.meta.dir, "bare.ts")} --outfile ${out}`.quiet();
  return out;
}

/**
 * Drops the binary's pages from the page cache, as after a reboot or a deploy that copied the file. Both
 * binaries read 5–6 MB more RSS at start while freshly written than once their pages had been dropped and
 * read back in (most likely the kernel mapping more of a wholly cached file on each fault), and the state
 * each happened to be in moved the ratio by 0.2 (docs/performance.md, "Footprint").
 */
export async function coldPageCache(binary: string): Promise<void> {
  // GNU dd's nocache flag is posix_fadvise(POSIX_FADV_DONTNEED) on the whole file, which leaves pages not
  // yet written back: a binary just built kept them all until it was synced first.
  await $`sync ${binary}`.quiet();
  await $`dd if=${binary} iflag=nocache count=0 status=none`.quiet();
}

/** CPU seconds a process has used so far, all its threads: utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms. */
export function cpuSeconds(pid: number): number {
  // The fields after the command's closing parenthesis start at the third (state); utime is the 14th.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function memory(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) * 1024;
}

/**
 * Starts `binary` in `dir` with `env` (on top of PATH) and waits for its `svc listening` line. The log goes
 * to a file, as a deployment's would: read through a pipe by this process, draining it would take CPU from
 * the server and wrk on the same two cores.
 */
export async function startListening(
  binary: string,
  dir: string,
  env: Record<string, string>,
): Promise<{ proc: Subprocess; base: string }> {
  const log = join(dir, `svc-${Date.now()}.log`);
  const proc = Bun.spawn([binary], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdout: Bun.file(log),
    stderr: "inherit",
  });
  let listening: string | undefined;
  while (
    !(listening = (existsSync(log) ? readFileSync(log, "utf8") : "")
      .split("\n")
      .find((l) => l.includes('"svc listening"')))
  ) {
    if (proc.exitCode !== null) throw new Error(`svc exited: ${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
    await Bun.sleep(5);
  }
  return { proc, base: JSON.parse(listening).address };
}

/**
 * Exec to the first 200 on /svc/health, the median of COLD_STARTS for each binary, their starts
 * alternating (who goes first alternating too), so that all meet the machine in the same moods: nine
 * of one then nine of the other read svc at 2.0–3.5 times the floor within one day. A first start (a
 * fresh folder under `work` each time: svc creates and migrates its database) unless `restart`, when every
 * start but a first, unmeasured one opens the database that one made, as a restart or a reboot does.
 */
export async function coldStarts(binaries: string[], work: string, { restart = false } = {}): Promise<number[]> {
  const times: number[][] = binaries.map(() => []);
  const kept = restart ? binaries.map(() => mkdtempSync(join(work, "restart-"))) : undefined;
  if (kept) for (const [i, binary] of binaries.entries()) await startOnce(binary, kept[i]!);
  for (let i = 0; i < COLD_STARTS; i++) {
    const order = i % 2 === 0 ? [...binaries.keys()] : [...binaries.keys()].reverse();
    for (const b of order) times[b]!.push(await startOnce(binaries[b]!, kept?.[b] ?? mkdtempSync(join(work, "cold-"))));
  }
  return times.map((t) => t.sort((x, y) => x - y)[(COLD_STARTS - 1) / 2]!);
}

/** One start in `dir`: ms from exec to the first 200 on /svc/health; the process is stopped after it. */
export async function startOnce(binary: string, dir: string): Promise<number> {
  const port = freePort();
  const started = performance.now();
  const proc = Bun.spawn([binary], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", SVC_PORT: String(port), SVC_HOST: "127.0.0.1", SVC_LOG_LEVEL: "warn" },
    stderr: "pipe",
  });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/svc/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (proc.exitCode !== null || performance.now() - started > 10_000) {
      proc.kill();
      throw new Error(`cold start: svc did not answer on port ${port}: ${await new Response(proc.stderr).text()}`);
    }
    await Bun.sleep(1);
  }
  const took = performance.now() - started;
  proc.kill();
  await proc.exited;
  return took;
}

// ---------------------------------------------------------------- the short run

/** One binary's figures in one run: bytes; ms; RSS bytes. */
interface Figures {
  size: number;
  cold: number;
  restart: number;
  atStart: number;
  afterLoad: number;
}

const SECRET = "bench-secret: 0123456789 ABCDEFGHIJ klmnop";
const LOAD_SECONDS = 3;
const LOGINS = 4;

/** wrk at 64 connections on `path` for LOAD_SECONDS (bench/request.lua), with `token` as the bearer if any. */
async function load(base: string, path: string, token = ""): Promise<void> {
  await $`wrk -t1 -c64 -d${LOAD_SECONDS}s -s ${join(import.meta.dir, "request.lua")} ${base}${path}`
    .env({ ...process.env, BENCH_METHOD: "GET", BENCH_TOKEN: token })
    .quiet();
}

async function login(base: string, username: string): Promise<string> {
  const response = await fetch(`${base}/svc-api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password: PASSWORD }),
  });
  if (!response.ok) throw new Error(`login as ${username}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/** RSS at `svc listening` and IDLE_AFTER_MS after the load, its pages first dropped from the page cache. */
async function memoryOf(binary: string, work: string, bare: boolean): Promise<[number, number]> {
  const dir = mkdtempSync(join(work, "rss-"));
  if (!bare) await seed(`sqlite:${join(dir, "data", "svc.db")}`, 1000, 50);
  await coldPageCache(binary);
  const { proc, base } = await startListening(binary, dir, {
    SVC_HOST: "127.0.0.1",
    SVC_PORT: "0",
    SVC_JWT_SECRET: SECRET,
  });
  try {
    const atStart = memory(proc.pid, "VmRSS");
    // The bare server answers only the probe: it gets as long a load of it as svc gets of all three.
    if (bare) for (let i = 0; i < 2; i++) await load(base, "/svc/health");
    else {
      let token = "";
      for (let i = 1; i <= LOGINS; i++) token = await login(base, `user${i}`);
      await load(base, "/svc/health");
      await load(base, "/svc-api/v1/users/all?limit=100", token);
    }
    await Bun.sleep(IDLE_AFTER_MS);
    return [atStart, memory(proc.pid, "VmRSS")];
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

async function measure(binaries: string[], work: string): Promise<Figures[]> {
  const cold = await coldStarts(binaries, work);
  const restart = await coldStarts(binaries, work, { restart: true });
  const rss: [number, number][] = [];
  for (const [i, binary] of binaries.entries()) rss.push(await memoryOf(binary, work, i === binaries.length - 1));
  return binaries.map((binary, i) => ({
    size: Bun.file(binary).size,
    cold: cold[i]!,
    restart: restart[i]!,
    atStart: rss[i]![0],
    afterLoad: rss[i]![1],
  }));
}

function row(name: string, f: Figures, bare: Figures): string {
  const cell = (value: number, floor: number, digits: number) =>
    `${value.toFixed(digits)} (${(value / floor).toFixed(2)}×)`;
  return `| ${name} | ${cell(f.size / 1e6, bare.size / 1e6, 1)} | ${cell(f.cold, bare.cold, 1)} | ${cell(f.restart, bare.restart, 1)} | ${cell(f.atStart / 1e6, bare.atStart / 1e6, 1)} | ${cell(f.afterLoad / 1e6, bare.afterLoad / 1e6, 1)} |`;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => !/^--(svc|runs)=./.test(a));
  if (unknown.length > 0) {
    process.stderr.write(
      `footprint: unknown ${unknown.join(" ")}\nusage: bun bench/footprint.ts [--svc=<binary>]... [--runs=<n>]\n`,
    );
    process.exit(2);
  }
  const runs = Number(args.find((a) => a.startsWith("--runs="))?.slice("--runs=".length) ?? 3);
  const work = mkdtempSync(join(tmpdir(), "svc-footprint-"));
  process.on("exit", () => rmSync(work, { recursive: true, force: true }));
  let svcs = args.filter((a) => a.startsWith("--svc=")).map((a) => a.slice("--svc=".length));
  if (svcs.length === 0) {
    await $`${process.execPath} run build ${join(work, "svc")}`.cwd(join(import.meta.dir, "..")).quiet();
    svcs = [join(work, "svc")];
  }
  const binaries = [...svcs, await buildBare(join(work, "bare"))];
  console.log(
    "| binary, run | size (MB) | first start (ms) | restart (ms) | RSS at start (MB) | RSS 5 s after the load (MB) |\n|---|---:|---:|---:|---:|---:|",
  );
  for (let run = 1; run <= runs; run++) {
    const figures = await measure(binaries, work);
    const bare = figures.at(-1)!;
    for (const [i, svc] of svcs.entries()) console.log(row(`${svc}, ${run}`, figures[i]!, bare));
    console.log(row(`bare, ${run}`, bare, bare));
  }
  process.exit(0);
}
