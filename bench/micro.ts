// `bun run bench:micro`: the small, in-process measurements behind choices the code's comments point at
// (bench/results.md, "Measured by hand"). Each pair runs in the same process, interleaved, best of 3.
import { Database } from "bun:sqlite";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import pino from "pino";
import { createLoggers } from "../src/observability/log.ts";
import { migrateSqlite } from "../src/db/sqlite/migrate.ts";
import * as t from "../src/db/sqlite/schema.ts";

const ROUNDS = 3;

async function timeOf(run: () => unknown, n: number): Promise<number> {
  for (let i = 0; i < n / 10; i++) await run();
  const started = performance.now();
  for (let i = 0; i < n; i++) await run();
  return ((performance.now() - started) * 1000) / n;
}

/** Best of ROUNDS µs per call for each of a pair, interleaved. */
async function pair(title: string, n: number, a: [string, () => unknown], b: [string, () => unknown]): Promise<void> {
  const best = [Infinity, Infinity];
  for (let round = 0; round < ROUNDS; round++) {
    best[0] = Math.min(best[0]!, await timeOf(a[1], n));
    best[1] = Math.min(best[1]!, await timeOf(b[1], n));
  }
  console.log(`- ${title}: ${a[0]} ${best[0]!.toFixed(2)} µs, ${b[0]} ${best[1]!.toFixed(2)} µs`);
}

// The token check of every authenticated request, on the embedded database.
const client = new Database(":memory:", { strict: true });
const db = drizzle({ client });
migrateSqlite(client);
const id = Bun.randomUUIDv7();
client.run(
  "INSERT INTO users (id, username, username_key, email, password_hash, created_at, updated_at) VALUES (?, 'ann', 'ann', 'ann@example.com', 'h', 'x', 'x')",
  [id],
);
const version = (name: string) =>
  sql<number>`(select ${t.tableVersions.version} from ${t.tableVersions} where ${t.tableVersions.name} = ${name})`;
const viaDrizzle = db
  .select({
    revoked:
      sql`exists (select 1 from ${t.revokedTokens} where ${t.revokedTokens.jti} = ${sql.placeholder("jti")})`.mapWith(
        Boolean,
      ),
    users: version("users").mapWith(Number),
    categories: version("categories").mapWith(Number),
  })
  .from(t.users)
  .where(eq(t.users.id, sql.placeholder("id")))
  .prepare();
const VERSIONS = `(SELECT version FROM table_versions WHERE name = 'users') AS users, (SELECT version FROM table_versions WHERE name = 'categories') AS categories`;
const plain = client.query(
  `SELECT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ?) AS revoked, ${VERSIONS} FROM users WHERE id = ?`,
);
await pair(
  "SQLite token check (revocation and table versions), awaited",
  200_000,
  ["Drizzle prepared query", () => viaDrizzle.execute({ id, jti: "j" })],
  ["plain bun:sqlite statement", async () => plain.get("j", id)],
);

// The access line of every request.
const sink = { write: () => true };
const viaPino = pino({ level: "info", base: { service: "svc" }, timestamp: pino.stdTimeFunctions.isoTime }, sink);
const { access } = createLoggers("info", sink);
const entry = {
  requestId: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
  clientRequestId: null,
  method: "GET",
  route: "/svc/health",
  path: "/svc/health",
  status: 200,
  durationMs: 0.12,
  userId: null,
  clientAddress: "127.0.0.1",
  userAgent: "wrk/4.2.0",
};
await pair(
  "access line",
  300_000,
  [
    "pino",
    () =>
      viaPino.info(
        {
          request_id: entry.requestId,
          method: "GET",
          route: entry.route,
          path: entry.path,
          status: 200,
          duration_ms: 0.12,
          client_address: entry.clientAddress,
          user_agent: entry.userAgent,
        },
        "request completed",
      ),
  ],
  ["svc's fixed serializer", () => access.completed(entry)],
);

// What reading a POST body twice would cost a server (GraphQL reads it once and hands Yoga the bytes):
// a request a server received, cloned, is far dearer than one made in process, so this one is served
// and measured with wrk.
const postLua = `${import.meta.dir}/request.lua`;
async function served(name: string, handle: (request: Request) => Promise<Response>): Promise<[string, number]> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handle });
  try {
    const env = {
      ...process.env,
      BENCH_METHOD: "POST",
      BENCH_BODY: '{"query":"{ categories { id name description colorHex icon } }"}',
    };
    const out = await Bun.$`wrk -t1 -c64 -d3s -s ${postLua} http://127.0.0.1:${server.port}/`.env(env).quiet().text();
    return [name, Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1])];
  } finally {
    server.stop(true);
  }
}
if (Bun.which("wrk")) {
  const best = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, rps] of [
      await served("read once", async (r) => new Response(String(JSON.parse(await r.text()) !== null))),
      await served("read through clone()", async (r) => {
        await r.clone().text();
        return new Response(String((await r.json()) !== null));
      }),
    ]) {
      best.set(name, Math.max(best.get(name) ?? 0, rps));
    }
  }
  const [once, twice] = [...best.values()] as [number, number];
  console.log(
    `- a served POST body (64 connections, wrk): read once ${once.toFixed(0)} req/s, read through clone() ${twice.toFixed(0)} req/s (${(1e6 / twice - 1e6 / once).toFixed(1)} µs more a request)`,
  );
}
