// `bun run bench:postgres-reads`: where an authenticated read's time and CPU go on PostgreSQL, without
// HTTP. Each line is one way of answering the token check every authenticated request makes, on a
// throwaway database of svc's schema (PostgreSQL at TEST_POSTGRES_URL, or the local one), with one call in
// flight and then 64: wall time per call, CPU per call in this process, and CPU per call in PostgreSQL's
// processes (read from /proc, all of them: the server's work for the call). Best of 3 runs of each. Then
// how soon a second instance refuses a token whose session the first ended (SVC_DB_STALENESS bounds it).
import { SQL } from "bun";
import { readdirSync, readFileSync } from "node:fs";
import { caching } from "../src/cache/caching.ts";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import { createTestDatabase, postgresConfig } from "../test/postgres.ts";

const CALLS = 20_000;
const RUNS = 3;
const TICK_US = 1_000_000 / 100; // /proc's clock ticks (USER_HZ)

/** CPU time of every postgres process so far, in µs. */
function postgresCpu(): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      if (!stat.slice(stat.indexOf("(") + 1, close).startsWith("postgres")) continue;
      const fields = stat.slice(close + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // The process ended while being read.
    }
  }
  return ticks * TICK_US;
}

const ownCpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

interface Figures {
  wall: number;
  cpu: number;
  server: number;
}

async function measure(call: () => unknown, inFlight: number): Promise<Figures> {
  let best: Figures | undefined;
  for (let run = 0; run < RUNS; run++) {
    for (let i = 0; i < CALLS / 20; i++) await call();
    const [wall0, cpu0, server0] = [performance.now(), ownCpu(), postgresCpu()];
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < CALLS) await call();
      }),
    );
    const figures = {
      wall: ((performance.now() - wall0) * 1000) / CALLS,
      cpu: (ownCpu() - cpu0) / CALLS,
      server: (postgresCpu() - server0) / CALLS,
    };
    if (!best || figures.wall < best.wall) best = figures;
  }
  return best!;
}

const database = await createTestDatabase("bench_reads");
const config = postgresConfig(database.url);
// As svc 0.1 read (every request asks the database), and as it reads now (kept in memory, LISTEN/NOTIFY).
const asked = await openPostgresStore({ ...config, poolMax: 10, statementTimeoutMs: 5000, stalenessMs: 0 });
const store = await openPostgresStore({ ...config, poolMax: 10, statementTimeoutMs: 5000, stalenessMs: 1000 });
const raw = new SQL({ url: database.url, max: 10 });
try {
  const userId = Bun.randomUUIDv7();
  const sessionId = Bun.randomUUIDv7();
  const at = new Date().toISOString();
  const later = new Date(Date.now() + 3_600_000).toISOString();
  await raw`insert into users (id, username, username_key, email, password_hash, created_at, updated_at)
    values (${userId}, 'ann', 'ann', 'ann@example.com', 'h', ${at}, ${at})`;
  await raw`insert into sessions (id, user_id, created_at, last_used_at, expires_at)
    values (${sessionId}, ${userId}, ${at}, ${at}, ${later})`;
  const cached = caching(store);
  const cachedAsked = caching(asked);
  const statement = `select (select expires_at from sessions where id = $1 and user_id = $2) as standing,
    (select version from table_versions where name = 'users') as users,
    (select version from table_versions where name = 'categories') as categories
    from users where id = $2`;
  const ways: Array<[string, () => unknown]> = [
    ["select 1, Bun's SQL client", () => raw`select 1`],
    ["the token check's statement, Bun's SQL client", () => raw.unsafe(statement, [sessionId, userId])],
    [
      "the token check as the store asks the database for it (Drizzle, deadline; SVC_DB_STALENESS=0)",
      () => asked.tokenState(userId, "", sessionId),
    ],
    [
      "the token check and holder through the cache layer, asked (SVC_DB_STALENESS=0)",
      () => cachedAsked.request(() => cachedAsked.store.tokenHolder(userId, "", sessionId)),
    ],
    [
      "the token check and holder through the cache layer, kept (SVC_DB_STALENESS=1s, the default)",
      () => cached.request(() => cached.store.tokenHolder(userId, "", sessionId)),
    ],
  ];
  console.log(
    `PostgreSQL token check, ${CALLS} calls, best of ${RUNS}: wall / CPU here / CPU in PostgreSQL, µs per call`,
  );
  for (const inFlight of [1, 64]) {
    console.log(`\n${inFlight} in flight`);
    for (const [title, call] of ways) {
      const { wall, cpu, server } = await measure(call, inFlight);
      console.log(`- ${title}: ${wall.toFixed(1)} / ${cpu.toFixed(1)} / ${server.toFixed(1)}`);
    }
  }

  // A session ended by another writer (here a plain DELETE, as another instance's logout makes), and this
  // instance asked about its token until it refuses it: the time from the writer's commit to that.
  const lags: number[] = [];
  for (let i = 0; i < 200; i++) {
    const session = Bun.randomUUIDv7();
    await raw`insert into sessions (id, user_id, created_at, last_used_at, expires_at)
      values (${session}, ${userId}, ${at}, ${at}, ${later})`;
    await store.settled!();
    await store.tokenState(userId, "", session);
    await store.settled!();
    await store.tokenState(userId, "", session); // now kept
    await raw`delete from sessions where id = ${session}`;
    const committed = performance.now();
    for (;;) {
      const state = await store.tokenState(userId, "", session);
      if (!state || state.revoked) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    lags.push(performance.now() - committed);
  }
  lags.sort((x, y) => x - y);
  const quantile = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))]!.toFixed(2);
  console.log(
    `\nA session ended by another writer, refused here after (ms, 200 times): median ${quantile(0.5)}, p99 ${quantile(0.99)}, max ${quantile(1)}`,
  );
} finally {
  await raw.close();
  await asked.close();
  await store.close();
  await database.drop();
}
