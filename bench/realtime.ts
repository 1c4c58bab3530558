// `bun run bench:realtime`: category events pushed to SSE subscribers, measured from outside. 1,000
// subscribers on one instance (SQLite), then 500 + 500 on two instances sharing one PostgreSQL
// database; for each of 100 createCategory mutations, the time from the mutation's answer to the
// event's arrival at the last subscriber; and svc's RSS per open subscriber. The subscribers are
// fetch() streams in this process, on the same two cores as svc: their own parsing is in the figures.
// Writes the table into docs/performance.md between the realtime markers. Flags: --no-postgres. (Bun's fetch
// holds 256 requests at a time by default; the script raises BUN_CONFIG_MAX_HTTP_REQUESTS for 1,000 streams.)
import { SQL, type Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const binary = join(root, "dist", "svc");
const flags = new Set(process.argv.slice(2));
const SUBSCRIBERS = 1000;
const MUTATIONS = 100;
const USERS = 50;
const SECRET = "bench-secret: 0123456789 ABCDEFGHIJ klmnop";
const PASSWORD = "bench password 1";
const POSTGRES_ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const QUERY = JSON.stringify({ query: "subscription { categoryEvents { kind id category { name } } }" });

const work = mkdtempSync(join(tmpdir(), "svc-bench-rt-"));
const children: Subprocess[] = [];
process.on("exit", () => {
  for (const child of children) child.kill();
  rmSync(work, { recursive: true, force: true });
});

interface Svc {
  base: string;
  pid: number;
}

async function startSvc(env: Record<string, string>): Promise<Svc> {
  const log = join(work, `svc-${Date.now()}-${Math.random()}.log`);
  const proc = Bun.spawn([binary], {
    cwd: work,
    env: {
      PATH: process.env.PATH ?? "",
      SVC_HOST: "127.0.0.1",
      SVC_PORT: "0",
      SVC_JWT_SECRET: SECRET,
      // Its USERS sign up from this one address: more than the sign-up limit's 30 an hour.
      SVC_SIGNUP_CLIENT_MAX: "1000000",
      SVC_SUBSCRIPTIONS_PER_USER: String(SUBSCRIBERS / USERS),
      ...env,
    },
    stdout: Bun.file(log),
    stderr: "inherit",
  });
  children.push(proc);
  for (let i = 0; i < 500; i++) {
    const listening = (existsSync(log) ? readFileSync(log, "utf8") : "")
      .split("\n")
      .find((line) => line.includes('"svc listening"'));
    if (listening) return { base: JSON.parse(listening).address, pid: proc.pid };
    if (proc.exitCode !== null) throw new Error(`svc exited: ${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
    await Bun.sleep(20);
  }
  throw new Error("svc did not start");
}

function rss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
}

async function post(base: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function tokens(base: string, prefix: string): Promise<string[]> {
  const made: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const username = `${prefix}${i}`;
    await post(base, "/svc-api/v1/users/create", { username, email: `${username}@example.com`, password: PASSWORD });
    made.push((await post(base, "/svc-api/v1/auth/login", { username, password: PASSWORD })).body.token);
  }
  return made;
}

/** Arrivals per event id: how many subscribers have it, and when the last one did. */
const arrivals = new Map<string, { count: number; last: number }>();

async function subscribe(base: string, token: string, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${base}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${token}` },
    body: QUERY,
    signal,
  });
  if (response.status !== 200) throw new Error(`subscribe: ${response.status} ${await response.text()}`);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    let text = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = text.indexOf("\n\n")) !== -1) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const match = /"id":"([^"]+)"/.exec(block);
          if (!block.startsWith("event: next") || !match) continue;
          const seen = arrivals.get(match[1]!) ?? { count: 0, last: 0 };
          seen.count++;
          seen.last = performance.now();
          arrivals.set(match[1]!, seen);
        }
      }
    } catch {
      // Aborted at the end of the run.
    }
  })();
}

async function openSubscriptions(svc: Svc): Promise<number> {
  const body = await (await fetch(`${svc.base}/svc/metrics`)).text();
  return [...body.matchAll(/^svc_subscriptions_open\{.*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Result {
  label: string;
  subscribers: number;
  p50: number;
  p99: number;
  max: number;
  rssPerSubscriber: number[];
}

/** `instances` svcs; subscribers spread evenly; mutations sent to the first. */
async function run(label: string, instances: Svc[]): Promise<Result> {
  const signal = new AbortController();
  const rssBefore = instances.map((svc) => rss(svc.pid));
  const perInstance = SUBSCRIBERS / instances.length;
  const writerTokens = await tokens(instances[0]!.base, `w${label.length}x`);
  for (const [n, svc] of instances.entries()) {
    const owners = await tokens(svc.base, `s${n}${label.length}x`);
    const opening: Promise<void>[] = [];
    for (let i = 0; i < perInstance; i++) opening.push(subscribe(svc.base, owners[i % owners.length]!, signal.signal));
    await Promise.all(opening);
  }
  for (const svc of instances) {
    while ((await openSubscriptions(svc)) < perInstance) await Bun.sleep(20);
  }
  await Bun.sleep(500);
  const rssPerSubscriber = instances.map((svc, i) => (rss(svc.pid) - rssBefore[i]!) / perInstance);

  const latencies: number[] = [];
  for (let m = 0; m < MUTATIONS; m++) {
    const made = await post(
      instances[0]!.base,
      "/graphql",
      { query: `mutation { createCategory(input: { name: "${label} ${m}" }) { id } }` },
      writerTokens[m % writerTokens.length],
    );
    const answered = performance.now();
    const id = made.body.data.createCategory.id as string;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const seen = arrivals.get(id);
      if (seen && seen.count >= SUBSCRIBERS) {
        latencies.push(Math.max(0, seen.last - answered));
        break;
      }
      if (Date.now() > deadline)
        throw new Error(`${label}: event ${m} reached ${seen?.count ?? 0} subscribers in 10 s`);
      await Bun.sleep(1);
    }
  }
  signal.abort();
  latencies.sort((a, b) => a - b);
  return {
    label,
    subscribers: SUBSCRIBERS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1)!,
    rssPerSubscriber,
  };
}

if (!existsSync(binary)) {
  console.log("building dist/svc …");
  await Bun.$`bun run build`.cwd(root).quiet();
}

const results: Result[] = [];
{
  const svc = await startSvc({ SVC_DATABASE_URL: `sqlite:${join(work, "rt.db")}` });
  results.push(await run("SQLite, one instance", [svc]));
}
if (!flags.has("--no-postgres")) {
  const admin = new SQL({ url: POSTGRES_ADMIN, max: 1 });
  const name = `svc_bench_rt_${process.pid}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(POSTGRES_ADMIN);
    url.pathname = `/${name}`;
    const first = await startSvc({ SVC_DATABASE_URL: url.toString() });
    const second = await startSvc({ SVC_DATABASE_URL: url.toString() });
    results.push(await run("PostgreSQL, two instances", [first, second]));
    for (const child of children.splice(0)) child.kill();
    await Bun.sleep(300);
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.close();
  }
}

const cpu = (readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.+)/)?.[1] ?? "unknown").trim();
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} with \`bun run bench:realtime\` on ${cpu} (${navigator.hardwareConcurrency} cores): ${SUBSCRIBERS} SSE subscribers (${USERS} users, ${SUBSCRIBERS / USERS} each), ${MUTATIONS} createCategory mutations one after another, each timed from its answer to the event's arrival at the last subscriber (0 when every subscriber had it before the answer came back). The subscribers run in the bench's own process on the same cores; on PostgreSQL each instance serves 500.`,
  "",
  "| Setup | subscribers | p50 (ms) | p99 (ms) | max (ms) | svc RSS per subscriber |",
  "|---|---:|---:|---:|---:|---:|",
  ...results.map(
    (r) =>
      `| ${r.label} | ${r.subscribers} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.rssPerSubscriber.map((b) => `${(b / 1024).toFixed(1)} KB`).join(" / ")} |`,
  ),
].join("\n");
console.log(table);

const performancePath = join(root, "docs", "performance.md");
const doc = readFileSync(performancePath, "utf8");
const start = "<!-- realtime:start -->";
const end = "<!-- realtime:end -->";
if (doc.includes(start) && doc.includes(end)) {
  const before = doc.slice(0, doc.indexOf(start) + start.length);
  const after = doc.slice(doc.indexOf(end));
  await Bun.write(performancePath, `${before}\n${table}\n${after}`);
  console.log("docs/performance.md updated");
}
process.exit(0);
