// `bun run bench`: svc against the floor, in one run on one machine. Each case runs with wrk, the
// same connections and duration for svc and its floor, in paired rounds (svc and the floor back to
// back, who goes first alternating, each measured run of a read after an unmeasured second of it),
// the median pair reported; so do the reads at 256 connections, and the first second after a quiet spell,
// and the starts alternate too. Prints the table and writes it to bench/results.md and into docs/performance.md
// (between its bench markers); never into the README, whose one table is kept by hand.
// Flags: --quick (shorter runs), --no-postgres, --no-scale, --only=<text> (just the cases whose name
// holds the text, without the wide, createCategory and scale runs: for working on one case),
// --env=NAME=value (a setting for svc). Only a full run with the defaults is written; any other is printed.
import { $, type Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cpuSeconds,
  buildBare,
  COLD_STARTS,
  coldPageCache,
  coldStarts,
  IDLE_AFTER_MS,
  memory,
  startListening,
} from "./footprint.ts";
import { PASSWORD, seed } from "./seed.ts";

const root = join(import.meta.dir, "..");
const flags = new Set(process.argv.slice(2));
const USAGE = `usage: bun bench/run.ts [--quick] [--no-postgres] [--no-scale] [--only=<text>] [--wide] [--env=NAME=value]...

svc against the floor, and the footprint against a bare compiled Bun.serve (about 30 minutes). A full run
with the defaults writes bench/results.md and the table in docs/performance.md; any other run only prints.
--wide with --only also runs the selected reads' rounds at 256 connections (tail latency).
`;
// The bench takes half an hour and records what it measures: a flag it does not know stops it before it starts.
const unknown = [...flags].filter(
  (f) =>
    !["--quick", "--no-postgres", "--no-scale", "--wide", "--help", "-h"].includes(f) && !/^--(only|env)=./.test(f),
);
if (flags.has("--help") || flags.has("-h")) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown ${unknown.join(" ")}\n${USAGE}`);
  process.exit(2);
}
const SECONDS = flags.has("--quick") ? 2 : 5;
const ONLY = [...flags].find((f) => f.startsWith("--only="))?.slice("--only=".length);
/** --env=NAME=value (repeatable): extra settings for every svc the bench starts, such as SVC_LOG_PROBES=false. */
const EXTRA_ENV = Object.fromEntries(
  [...flags]
    .filter((f) => f.startsWith("--env="))
    .map((f) => {
      const [name, ...value] = f.slice("--env=".length).split("=");
      return [name!, value.join("=")];
    }),
);
/** Paired rounds of each case at its own connections: an odd number, for a median. */
const ROUNDS = 3;
/**
 * Paired rounds of each read at 64 connections (#19 sets a rate for two of them): their rounds within one run
 * spread by up to 0.12 of the floor (0.57, 0.64, 0.69), so a median of three moved with one round's luck. Reads
 * change nothing, so two more rounds cost only time (about 4 minutes in all).
 */
const READ_ROUNDS = 5;
/** The heading of bench/results.md's part that this run leaves as it is. */
const BY_HAND = "## Measured by hand";
const SECRET = "bench-secret: 0123456789 ABCDEFGHIJ klmnop";
const POSTGRES_ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const work = mkdtempSync(join(tmpdir(), "svc-bench-"));
const children: Subprocess[] = [];
process.on("exit", () => {
  for (const child of children) child.kill();
  rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------- processes

async function build(): Promise<string> {
  await $`${process.execPath} run build`.cwd(root).quiet();
  return join(root, "dist", "svc");
}

interface Running {
  proc: Subprocess;
  base: string;
  rss(): number;
  peakRss(): number;
}

async function startSvc(binary: string, dir: string, env: Record<string, string>): Promise<Running> {
  const { proc, base } = await startListening(binary, dir, {
    SVC_HOST: "127.0.0.1",
    SVC_PORT: "0",
    SVC_JWT_SECRET: SECRET,
    // Every request comes from this one address: past 30 sign-ups an hour, the sign-up limit would answer 429.
    SVC_SIGNUP_CLIENT_MAX: "1000000",
    ...EXTRA_ENV,
    ...env,
  });
  children.push(proc);
  return { proc, base, rss: () => memory(proc.pid, "VmRSS"), peakRss: () => memory(proc.pid, "VmHWM") };
}

async function startFloor(responses: Record<string, unknown>): Promise<Running> {
  const file = join(work, `floor-${Date.now()}.json`);
  await Bun.write(file, JSON.stringify(responses));
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "floor.ts"), file], {
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(proc);
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  const port = /listening (\d+)/.exec(new TextDecoder().decode(value))![1];
  return {
    proc,
    base: `http://127.0.0.1:${port}`,
    rss: () => memory(proc.pid, "VmRSS"),
    peakRss: () => memory(proc.pid, "VmHWM"),
  };
}

async function stopProcess(running: Running): Promise<void> {
  running.proc.kill("SIGTERM");
  await running.proc.exited;
}

// ---------------------------------------------------------------- data

// ---------------------------------------------------------------- wrk

interface Case {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
  token?: boolean;
  /** Sign-up: a fresh username per request. */
  unique?: boolean;
  /**
   * Login: "{n}" goes round 1..cycle, one account after another. Each account sees one or two attempts at
   * a time: the throttle counts concurrent attempts on one account before checking any, and blocks at five.
   */
  cycle?: number;
  /**
   * Refresh: each request sends a refresh token from a pool that the answers refill with their
   * successors, so every request rotates a current token (never a replay).
   */
  refresh?: boolean;
  connections: number;
  /**
   * Conditional: each request sends If-None-Match with the tag svc gave this very request beforehand,
   * so every answer is a 304 (a client polling an unchanged list).
   */
  revalidate?: boolean;
  /** What the floor does besides answering. */
  work?: "verify" | "hash" | "write";
  /** A read: also measured at WIDE connections, for the tail latency against the floor's. */
  read?: boolean;
}

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  socketErrors: number;
  /** The server's CPU time per request (all its threads), in µs: what the share of the floor comes down to on two shared cores. */
  cpuMicros?: number;
}

/**
 * Waits (up to 15 s) until the server at `pid` has used under 10 ms of CPU in 200 ms: what a run left it
 * still doing (logins whose clients wrk had already closed, each an argon2id verify) would otherwise go
 * into the next run, and with paired rounds two runs of one server can follow each other. Two of svc's
 * login runs back to back had the second refused with 429 while the first's verifies still held their
 * throttle reservations.
 */
async function settle(pid: number): Promise<void> {
  const deadline = performance.now() + 15_000;
  let before = cpuSeconds(pid);
  while (performance.now() < deadline) {
    await Bun.sleep(200);
    const now = cpuSeconds(pid);
    if (now - before < 0.01) return;
    before = now;
  }
}

function milliseconds(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text)!;
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "s" ? value * 1000 : value;
}

let runNumber = 0;
/** Refresh tokens per refresh run: more than its connections, so the pool never runs dry. */
const REFRESH_POOL = 96;

/** The unmeasured run of a load before its measured one (see `warm` below). */
const WARM_UP_SECONDS = 1;

/** A load that changes nothing, so that a run of it can go before the measured one without changing what that one does. */
const repeatable = (c: Case) => !c.unique && !c.cycle && !c.refresh;

interface RunOptions {
  connections?: number;
  refreshTokens?: string[];
  /** Sent as If-None-Match. */
  tag?: string;
  /** The server's process, to measure its CPU time per request. */
  pid?: number;
  /**
   * First a WARM_UP_SECONDS run of the same load, unmeasured: what is measured is the server at work. A
   * server that has been idle meets the first second of a burst with code it must compile again (svc
   * throws its compiled code away when idle, docs/performance.md "Footprint"), and with paired rounds three of five
   * runs followed 5–10 s of idle; what that costs is measured on its own (the after-quiet rounds in runCases).
   */
  warm?: boolean;
  seconds?: number;
}

async function wrk(
  base: string,
  c: Case,
  token: string,
  { connections = c.connections, refreshTokens = [], tag = "", pid, warm = false, seconds = SECONDS }: RunOptions = {},
): Promise<WrkResult> {
  const env = {
    ...process.env,
    BENCH_IF_NONE_MATCH: tag,
    BENCH_METHOD: c.method,
    BENCH_BODY: c.body ?? "",
    BENCH_TOKEN: c.token ? token : "",
    BENCH_UNIQUE: c.unique ? `r${++runNumber}x` : "",
    BENCH_CYCLE: c.cycle ? String(c.cycle) : "",
    BENCH_REFRESH: refreshTokens.join(","),
  };
  if (pid !== undefined) await settle(pid);
  // Straight after settling: a pause of a quarter of a second would count as idle again.
  if (warm && repeatable(c))
    await $`wrk -t1 -c${connections} -d${WARM_UP_SECONDS}s -s ${join(import.meta.dir, "request.lua")} ${base}${c.path}`
      .env(env)
      .quiet();
  const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
  const out =
    await $`wrk -t1 -c${connections} -d${seconds}s --latency -s ${join(import.meta.dir, "request.lua")} ${base}${c.path}`
      .env(env)
      .quiet()
      .text();
  const requests = Number(/(\d+) requests in/.exec(out)![1]);
  const cpuMicros = pid === undefined || requests === 0 ? undefined : ((cpuSeconds(pid) - cpuBefore) * 1e6) / requests;
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
    p50: milliseconds(/\s50%\s+(\S+)/.exec(out)![1]!),
    p99: milliseconds(/\s99%\s+(\S+)/.exec(out)![1]!),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((n, v) => n + Number(v), 0) : 0,
    cpuMicros,
  };
}

/** The tag svc gives this request now: what a revalidating client sends back. */
async function tagOf(base: string, c: Case, token: string): Promise<string> {
  const response = await fetch(`${base}${c.path}`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  const tag = response.headers.get("etag");
  if (!tag) throw new Error(`${c.name}: svc gave no ETag`);
  return tag;
}

/** The floor's key for a request: method, path, and the tag it revalidates, if any. */
const floorKey = (method: string, path: string, tag = "") => `${method} ${path.split("?")[0]} ${tag}`.trimEnd();

async function capture(base: string, c: Case, token: string, hash: string, tag = "") {
  const headers: Record<string, string> = {};
  if (c.body) headers["content-type"] = "application/json";
  if (c.token) headers.authorization = `Bearer ${token}`;
  if (tag) headers["if-none-match"] = tag;
  const filler = c.refresh ? (await sessions(base, 1))[0]! : c.cycle ? "1" : "capture";
  const body = c.body?.replace("{n}", filler);
  const response = await fetch(`${base}${c.path}`, { method: c.method, headers, body });
  const answer = {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
  delete (answer.headers as Record<string, string>)["content-length"];
  delete (answer.headers as Record<string, string>).date;
  return { ...answer, work: c.work, password: PASSWORD, hash };
}

// ---------------------------------------------------------------- the run

/** The GraphQL list the bench reads, by POST and by GET. */
const CATEGORIES_QUERY = "{ categories { id name description colorHex icon } }";

const CASES: Case[] = [
  { name: "GET /svc/health", method: "GET", path: "/svc/health", connections: 64 },
  {
    name: "GET /svc-api/v1/users/all?limit=100",
    read: true,
    method: "GET",
    path: "/svc-api/v1/users/all?limit=100",
    token: true,
    connections: 64,
  },
  {
    name: "GraphQL categories (50)",
    read: true,
    method: "POST",
    path: "/graphql",
    body: JSON.stringify({ query: CATEGORIES_QUERY }),
    token: true,
    connections: 64,
  },
  {
    name: "GET /svc-api/v1/users/all?limit=100, If-None-Match → 304",
    read: true,
    method: "GET",
    path: "/svc-api/v1/users/all?limit=100",
    token: true,
    revalidate: true,
    connections: 64,
  },
  {
    name: "GraphQL categories (50) by GET, If-None-Match → 304",
    read: true,
    method: "GET",
    path: `/graphql?query=${encodeURIComponent(CATEGORIES_QUERY)}`,
    token: true,
    revalidate: true,
    connections: 64,
  },
  {
    name: "POST /auth/login",
    method: "POST",
    path: "/svc-api/v1/auth/login",
    body: JSON.stringify({ username: "user{n}", password: PASSWORD }),
    cycle: 256,
    connections: 64,
    work: "verify",
  },
  {
    name: "POST /auth/refresh",
    method: "POST",
    path: "/svc-api/v1/auth/refresh",
    body: JSON.stringify({ refresh_token: "{n}" }),
    refresh: true,
    connections: 64,
    work: "write",
  },
  {
    name: "POST /users/create",
    method: "POST",
    path: "/svc-api/v1/users/create",
    body: JSON.stringify({ username: "u{n}", email: "u{n}@example.com", password: PASSWORD }),
    unique: true,
    connections: 64,
    work: "hash",
  },
];

const SELECTED = ONLY === undefined ? CASES : CASES.filter((c) => c.name.toLowerCase().includes(ONLY.toLowerCase()));

const CREATE_CATEGORY: Case = {
  name: "createCategory",
  method: "POST",
  path: "/graphql",
  body: JSON.stringify({ query: 'mutation { createCategory(input: { name: "c{n}" }) { id } }' }),
  token: true,
  unique: true,
  connections: 64,
};

interface Row {
  name: string;
  svc: WrkResult;
  floor: WrkResult;
}

/** Connections for the tail-latency runs of the read cases. */
const WIDE = 256;
/** Paired rounds of each tail-latency run: an odd number, for a median. */
const WIDE_ROUNDS = 5;

/** Idle before each after-quiet round: longer than svc's release of its compiled code takes to come (a quarter to half a second). */
const QUIET_SECONDS = 8;
/** Paired after-quiet rounds of each read: an odd number, for a median. */
const QUIET_ROUNDS = 3;

/** A tail-latency result: the round with the median p99 ratio, and every round's ratio. */
interface WideRow extends Row {
  ratios: number[];
}

/**
 * `rounds` pairs of runs, `svc`'s and the floor's back to back, who goes first alternating; `round` sets
 * up each pair and gives its run of either server. Returns every pair and the one with the median `ratio`.
 */
async function pairedRounds(
  { svc, floor }: { svc: Running; floor: Running },
  name: string,
  rounds: number,
  ratio: (pair: Row) => number,
  round: () => Promise<(server: Running) => Promise<WrkResult>>,
): Promise<{ median: Row; pairs: Row[] }> {
  const pairs: Row[] = [];
  for (let i = 0; i < rounds; i++) {
    const run = await round();
    const svcFirst = i % 2 === 0;
    const first = await run(svcFirst ? svc : floor);
    const second = await run(svcFirst ? floor : svc);
    pairs.push({ name, svc: svcFirst ? first : second, floor: svcFirst ? second : first });
  }
  const median = [...pairs].sort((a, b) => ratio(a) - ratio(b))[Math.floor(pairs.length / 2)]!;
  return { median, pairs };
}

async function runCases(
  label: string,
  svc: Running,
  token: string,
  hash: string,
): Promise<{ rows: Row[]; wide: WideRow[]; extra: string[]; peak: number }> {
  const responses: Record<string, unknown> = {};
  const tags = new Map<Case, string>();
  for (const c of SELECTED) {
    const tag = c.revalidate ? await tagOf(svc.base, c, token) : "";
    tags.set(c, tag);
    responses[floorKey(c.method, c.path, tag)] = await capture(svc.base, c, token, hash, tag);
  }
  const floor = await startFloor(responses);
  const rows: Row[] = [];
  /** Each read's rate ratio in every round, for the report: the median alone hides how far rounds spread. */
  const readRounds: string[] = [];
  // Paired rounds, as at 256 connections below: svc and the floor back to back, who goes first
  // alternating, and the round with the median ratio reported. Best-of figures taken apart compared
  // moments as much as servers: in two runs on one day, svc with its defaults, the users page read 0.53 and 0.75.
  const rateRatio = (pair: Row) => pair.svc.rps / pair.floor.rps;
  for (const c of SELECTED) {
    const { median, pairs } = await pairedRounds(
      { svc, floor },
      c.name,
      c.read ? READ_ROUNDS : ROUNDS,
      rateRatio,
      async () => {
        // Fresh sessions for each svc run; the floor answers any text.
        const pool = c.refresh ? await sessions(svc.base, REFRESH_POOL) : [];
        return (server) =>
          wrk(server.base, c, token, { refreshTokens: pool, tag: tags.get(c), pid: server.proc.pid, warm: true });
      },
    );
    rows.push(median);
    const rounds = pairs.map((p) => rateRatio(p).toFixed(2)).join(", ");
    if (c.read)
      readRounds.push(
        `${c.name} at ${c.connections} connections, the rate ratio of each of the ${pairs.length} paired rounds: ${rounds} (median **${rateRatio(median).toFixed(2)}**)`,
      );
    // Refusals and failures answer fast: a ratio over them would measure the wrong thing.
    for (const pair of pairs)
      if (pair.svc.non2xx > 0) console.warn(`${label} ${c.name}: ${pair.svc.non2xx} answers were not 2xx`);
    console.log(
      `${label} ${c.name}: svc ${median.svc.rps.toFixed(0)} floor ${median.floor.rps.toFixed(0)} ratio ${rateRatio(median).toFixed(2)} (rounds ${rounds}; RSS peak so far ${(svc.peakRss() / 1e6).toFixed(0)} MB)`,
    );
  }
  // The reads at many connections. Each round is a pair, svc and the floor back to back (who goes first
  // alternates), and the pair's p99 ratio is what it measured: on two shared cores the floor's own rate
  // moved by half between runs minutes apart, so two best-of figures from different minutes compared the
  // machine's moods as much as the servers. The reported round is the one with the median ratio.
  const wide: WideRow[] = [];
  // The first second of a burst after a quiet spell, unwarmed: what svc's idle release costs the next
  // burst, which the warmed runs leave out. Both servers idle QUIET_SECONDS first.
  const quiet: WideRow[] = [];
  const p99Ratio = (pair: Row) => pair.svc.p99 / pair.floor.p99;
  if (ONLY === undefined || flags.has("--wide")) {
    for (const c of SELECTED.filter((c) => c.read)) {
      const { median, pairs } = await pairedRounds(
        { svc, floor },
        c.name,
        WIDE_ROUNDS,
        p99Ratio,
        async () => (server) => wrk(server.base, c, token, { connections: WIDE, tag: tags.get(c), warm: true }),
      );
      const ratios = pairs.map(p99Ratio);
      wide.push({ ...median, ratios });
      console.log(
        `${label} ${c.name} at ${WIDE}: p99 svc ${median.svc.p99.toFixed(2)} ms, floor ${median.floor.p99.toFixed(2)} ms (median ${p99Ratio(median).toFixed(2)}x; rounds ${ratios.map((r) => r.toFixed(2)).join(", ")})`,
      );
    }
    for (const c of SELECTED.filter((c) => c.read && !c.revalidate)) {
      const { median, pairs } = await pairedRounds({ svc, floor }, c.name, QUIET_ROUNDS, p99Ratio, async () => {
        await Bun.sleep(QUIET_SECONDS * 1000);
        return (server) => wrk(server.base, c, token, { connections: WIDE, tag: tags.get(c), seconds: 1 });
      });
      quiet.push({ ...median, ratios: pairs.map(p99Ratio) });
    }
  }
  await stopProcess(floor);

  const extra: string[] = [...readRounds];
  if (ONLY !== undefined) return { rows, wide, extra, peak: svc.peakRss() };
  for (const row of wide) {
    extra.push(
      `${row.name} at ${WIDE} connections, the median of ${WIDE_ROUNDS} paired rounds: ${row.svc.rps.toFixed(0)} req/s (the floor ${row.floor.rps.toFixed(0)}), p99 ${row.svc.p99.toFixed(2)} ms against the floor's ${row.floor.p99.toFixed(2)} ms (**${p99Ratio(row).toFixed(2)}x**; each round: ${row.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}), ${row.svc.non2xx} non-2xx, ${row.svc.socketErrors} socket errors`,
    );
  }
  for (const row of quiet) {
    extra.push(
      `${row.name} at ${WIDE} connections, the first second after ${QUIET_SECONDS} s of quiet (no warm-up), the median of ${QUIET_ROUNDS} paired rounds: p99 ${row.svc.p99.toFixed(2)} ms against the floor's ${row.floor.p99.toFixed(2)} ms (${p99Ratio(row).toFixed(2)}x; each round: ${row.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}), ${row.svc.rps.toFixed(0)} req/s against ${row.floor.rps.toFixed(0)}`,
    );
  }
  const peak = svc.peakRss();
  // Last, because it adds categories, which would change what the GraphQL case lists.
  const category = await wrk(svc.base, CREATE_CATEGORY, token);
  const busy = label === "sqlite" ? " (SQLITE_BUSY would show as 5xx)" : "";
  extra.push(
    `createCategory at 64 connections: ${category.rps.toFixed(0)} req/s, ${category.non2xx} non-2xx, ${category.socketErrors} socket errors${busy}`,
  );
  return { rows, wide, extra, peak };
}

/** The refresh tokens of `count` new sessions, over as many bench accounts. */
async function sessions(base: string, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 1; i <= count; i++) {
    const response = await fetch(`${base}/svc-api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: `user${i}`, password: PASSWORD }),
    });
    tokens.push(((await response.json()) as { refresh_token: string }).refresh_token);
  }
  return tokens;
}

async function login(base: string, username = "user1"): Promise<string> {
  const response = await fetch(`${base}/svc-api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password: PASSWORD }),
  });
  return ((await response.json()) as { token: string }).token;
}

/** users/all deep in the list and login, at a small and at a large table. */
async function scale(binary: string): Promise<string[]> {
  const lines: string[] = [];
  const measure = async (users: number, categories: number) => {
    const dir = mkdtempSync(join(work, `scale-${users}-`));
    const records = await seed(`sqlite:${join(dir, "data", "svc.db")}`, users, categories);
    const svc = await startSvc(binary, dir, {});
    const token = await login(svc.base);
    const middle = records[Math.floor(users / 2)]!;
    const page: Case = {
      name: "page",
      method: "GET",
      path: `/svc-api/v1/users/all?limit=100&after=${middle.id}`,
      token: true,
      connections: 64,
    };
    const signIn: Case = {
      name: "login",
      method: "POST",
      path: "/svc-api/v1/auth/login",
      body: JSON.stringify({ username: "user{n}", password: PASSWORD }),
      cycle: 256,
      connections: 64,
    };
    const result = { page: (await wrk(svc.base, page, token)).rps, login: (await wrk(svc.base, signIn, token)).rps };
    await stopProcess(svc);
    return result;
  };
  const small = await measure(1000, 50);
  const large = await measure(1_000_000, 10_000);
  lines.push(
    `users/all page in the middle: ${small.page.toFixed(0)} req/s at 1,000 users, ${large.page.toFixed(0)} at 1,000,000 (${(small.page / large.page).toFixed(2)}x)`,
  );
  lines.push(
    `login: ${small.login.toFixed(0)} req/s at 1,000 users, ${large.login.toFixed(0)} at 1,000,000 (${(small.login / large.login).toFixed(2)}x)`,
  );
  return lines;
}

const micros = (result: WrkResult) => result.cpuMicros?.toFixed(1) ?? "–";

function table(rows: Row[]): string {
  const head =
    "| Case | svc req/s | floor req/s | svc / floor | svc p50 / p99 (ms) | floor p50 / p99 (ms) | CPU µs per request, svc / floor |\n|---|---:|---:|---:|---:|---:|---:|";
  const body = rows.map(
    (r) =>
      `| ${r.name} | ${r.svc.rps.toFixed(0)} | ${r.floor.rps.toFixed(0)} | **${(r.svc.rps / r.floor.rps).toFixed(2)}** | ${r.svc.p50.toFixed(2)} / ${r.svc.p99.toFixed(2)} | ${r.floor.p50.toFixed(2)} / ${r.floor.p99.toFixed(2)} | ${micros(r.svc)} / ${micros(r.floor)} |`,
  );
  return [head, ...body].join("\n");
}

const binary = await build();
const size = Bun.file(binary).size;
const bare = await buildBare(join(work, "bare"));
const bareSize = Bun.file(bare).size;
const [cold, bareCold] = (await coldStarts([binary, bare], work)) as [number, number];
const [restart, bareRestart] = (await coldStarts([binary, bare], work, { restart: true })) as [number, number];

const dir = mkdtempSync(join(work, "sqlite-"));
const records = await seed(`sqlite:${join(dir, "data", "svc.db")}`, 1000, 50);
await coldPageCache(binary);
const svc = await startSvc(binary, dir, {});
const atStart = svc.rss();
const token = await login(svc.base);
await wrk(svc.base, CASES[0]!, token); // warm-up
// Idle means serving nothing: the allocator returns what a burst took (argon2id's 19 MiB per login,
// the garbage of a load) within a few seconds of quiet.
await Bun.sleep(IDLE_AFTER_MS);
const idle = svc.rss();
const sqlite = await runCases("sqlite", svc, token, records[0]!.passwordHash);
const peak = sqlite.peak;
await Bun.sleep(IDLE_AFTER_MS);
const afterLoad = svc.rss();
await stopProcess(svc);

// The floor's footprint, measured as svc's: at start, then 5 s after a load (health, as long as one case).
await coldPageCache(bare);
const bareRunning = await startSvc(bare, mkdtempSync(join(work, "bare-")), {});
const bareAtStart = bareRunning.rss();
await wrk(bareRunning.base, CASES[0]!, "");
await Bun.sleep(IDLE_AFTER_MS);
const bareAfterLoad = bareRunning.rss();
await stopProcess(bareRunning);

let postgres: Awaited<ReturnType<typeof runCases>> | undefined;
if (!flags.has("--no-postgres")) {
  const name = `svc_bench_${process.pid}`;
  await $`psql ${POSTGRES_ADMIN} -qc ${`CREATE DATABASE ${name}`}`.quiet();
  try {
    const url = new URL(POSTGRES_ADMIN);
    url.pathname = `/${name}`;
    const pgRecords = await seed(url.toString(), 1000, 50);
    const pgDir = mkdtempSync(join(work, "postgres-"));
    const pg = await startSvc(binary, pgDir, { SVC_DATABASE_URL: url.toString() });
    postgres = await runCases("postgres", pg, await login(pg.base), pgRecords[0]!.passwordHash);
    await stopProcess(pg);
  } finally {
    await $`psql ${POSTGRES_ADMIN} -qc ${`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`}`.quiet();
  }
}

const scaled = flags.has("--no-scale") || ONLY !== undefined ? [] : await scale(binary);

const cpu = (await $`grep -m1 "model name" /proc/cpuinfo`.quiet().text()).split(":")[1]?.trim();
function footprint(what: string, svcValue: number, bareValue: number, digits: number): string {
  return `| ${what} | ${svcValue.toFixed(digits)} | ${bareValue.toFixed(digits)} | **${(svcValue / bareValue).toFixed(2)}** |`;
}
const report = [
  `Measured ${new Date().toISOString().slice(0, 10)} with \`bun run bench\` on ${cpu} (${navigator.hardwareConcurrency} cores), wrk on the same machine: 1 thread, 64 connections, ${SECONDS} s per run, ${ROUNDS} rounds (${READ_ROUNDS} for the reads) each of svc and the floor back to back (who goes first alternating), the round with the median rate ratio reported; at ${WIDE} connections, ${WIDE_ROUNDS} such rounds, the round with the median p99 ratio reported; every measured run of a read or of health follows an unmeasured ${WARM_UP_SECONDS} s run of the same load on the same server (the first second after a quiet spell is measured apart, below); starts alternate between the two binaries. The floor is a bare \`Bun.serve\` answering with svc's very response bytes (for login: after one \`Bun.password.verify\`; for refresh: after one insert into a SQLite file with svc's settings, WAL and full sync, on either database; for sign-up: after one \`Bun.password.hash\`). svc runs with its defaults, request log included (written to a file).`,
  "",
  "**Embedded SQLite**",
  "",
  table(sqlite.rows),
  "",
  ...sqlite.extra.map((l) => `- ${l}`),
  `- RSS: ${(idle / 1e6).toFixed(0)} MB idle ${IDLE_AFTER_MS / 1000} s after a login and a warm-up load; ${(peak / 1e6).toFixed(0)} MB peak under load (the most it ever held, 256 connections included)`,
  "",
  "Footprint against a bare `Bun.serve` compiled with `--minify --bytecode` (bench/bare.ts), measured the same way (for the RSS figures each binary starts with its pages out of the page cache, as after a reboot or a deploy):",
  "",
  "| | svc | bare | svc / bare |",
  "|---|---:|---:|---:|",
  footprint("binary size (MB)", size / 1e6, bareSize / 1e6, 1),
  footprint(`cold start: exec to the first 200 on /svc/health (ms, median of ${COLD_STARTS})`, cold, bareCold, 0),
  footprint(
    `restart on its database: exec to the first 200 on /svc/health (ms, median of ${COLD_STARTS})`,
    restart,
    bareRestart,
    0,
  ),
  footprint("RSS right after start (MB)", atStart / 1e6, bareAtStart / 1e6, 0),
  footprint(`RSS ${IDLE_AFTER_MS / 1000} s after the load (MB)`, afterLoad / 1e6, bareAfterLoad / 1e6, 0),
  "",
  ...scaled.map((l) => `- ${l}`),
  ...(postgres
    ? [
        "",
        "**PostgreSQL** (same machine, same two cores)",
        "",
        table(postgres.rows),
        "",
        ...postgres.extra.map((l) => `- ${l}`),
      ]
    : []),
].join("\n");

console.log(`\n${report}\n`);
// A partial run (one case, shorter runs, a part skipped) or one with settings other than the defaults is
// for the console, not for the record: written, it would replace the full run's table with less.
const partial = ONLY !== undefined || ["--quick", "--no-postgres", "--no-scale"].some((flag) => flags.has(flag));
if (partial || Object.keys(EXTRA_ENV).length > 0) process.exit(0);
// The measurements made by hand (bench:micro and the like) stay below the run's own report.
const resultsPath = join(import.meta.dir, "results.md");
const previous = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : "";
const byHand = previous.indexOf(BY_HAND);
await Bun.write(resultsPath, `${report}\n${byHand === -1 ? "" : `\n${previous.slice(byHand)}`}`);
const performancePath = join(root, "docs", "performance.md");
const doc = await Bun.file(performancePath).text();
const marked = /(<!-- bench:start -->\n)[\s\S]*?(\n<!-- bench:end -->)/;
if (marked.test(doc)) await Bun.write(performancePath, doc.replace(marked, `$1${report}$2`));
else console.log(`${performancePath} has no bench markers: only bench/results.md was written`);
process.exit(0);
