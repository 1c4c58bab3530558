// `bun run bench:enumeration`: does a login for an unknown user take as long as one with a wrong
// password? Interleaved pairs at production argon2id cost, in process (the socket adds the same to
// both); prints the medians, their ratio, and the ratio's spread over the pairs. The suite proves
// both paths do the same work (test/api/enumeration.test.ts); this measures that it takes the same time.
import { createApp } from "../src/app.ts";
import { parseConfig } from "../src/config/index.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { createLoggers } from "../src/observability/log.ts";

const PAIRS = Number(process.argv.find((a) => a.startsWith("--pairs="))?.slice("--pairs=".length) ?? 200);
const config = {
  ...parseConfig({
    SVC_ENV: "test",
    SVC_JWT_SECRET: "bench-secret: 0123456789 ABCDEFGHIJ klmnop",
    SVC_DATABASE_URL: "sqlite::memory:",
  }),
  // Throttling out of the way: every attempt here fails.
  loginThrottle: {
    maxFailures: 1000,
    backoffBaseMs: 1,
    backoffMaxMs: 1,
    clientMaxFailures: 1_000_000,
    clientWindowMs: 1000,
  },
};
const app = createApp({ config, store: openSqliteStore(":memory:"), loggers: createLoggers("silent") });
const post = (path: string, body: unknown) =>
  app.handle(
    new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
await post("/svc-api/v1/users/create", {
  username: "ann",
  email: "ann@example.com",
  password: "correct horse battery",
});

async function attempt(username: string): Promise<number> {
  const started = performance.now();
  const reply = await post("/svc-api/v1/auth/login", { username, password: "wrong horse battery" });
  await reply.text();
  if (reply.status !== 401) throw new Error(`expected 401, got ${reply.status}`);
  return performance.now() - started;
}

// Warm-up: the decoy hash is made in the background at start, the common-password list on first use.
for (let i = 0; i < 5; i++) {
  await attempt("ann");
  await attempt(`warm${i}`);
}
const known: number[] = [];
const unknown: number[] = [];
const ratios: number[] = [];
for (let i = 0; i < PAIRS; i++) {
  // Alternate which goes first, so drift in the machine's speed falls on both alike.
  let k: number;
  let u: number;
  if (i % 2 === 0) {
    k = await attempt("ann");
    u = await attempt(`nobody${i}`);
  } else {
    u = await attempt(`nobody${i}`);
    k = await attempt("ann");
  }
  known.push(k);
  unknown.push(u);
  ratios.push(u / k);
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)]!;
const ms = (x: number) => `${x.toFixed(2)} ms`;
console.log(`login, ${PAIRS} interleaved pairs at m=19 MiB, t=2:`);
console.log(`  wrong password (known user): median ${ms(quantile(known, 0.5))}`);
console.log(`  unknown user:                median ${ms(quantile(unknown, 0.5))}`);
console.log(
  `  unknown / known: median ratio ${(quantile(unknown, 0.5) / quantile(known, 0.5)).toFixed(3)}; per pair 25th-75th percentile ${quantile(ratios, 0.25).toFixed(3)}-${quantile(ratios, 0.75).toFixed(3)}`,
);
process.exit(0);
