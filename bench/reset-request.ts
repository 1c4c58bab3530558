// `bun run bench:reset-request`: does asking for a reset link for an address no account has take as long
// as for one an account has? Interleaved pairs in process on SQLite (the socket adds the same to both),
// each address asked for once (as an attacker probing a list would); prints the medians and their
// difference. test/api/password-reset-mail.test.ts proves both paths make the same store calls; this
// measures that they take the same time (the known path also writes the token and the mail).
import { createApp } from "../src/app.ts";
import { MINIMAL_PASSWORD_COST, parseConfig } from "../src/config/index.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { createLoggers } from "../src/observability/log.ts";

const PAIRS = Number(process.argv.find((a) => a.startsWith("--pairs="))?.slice("--pairs=".length) ?? 200);
const WARM = 50;
const base = parseConfig({
  SVC_ENV: "test",
  SVC_JWT_SECRET: "bench-secret: 0123456789 ABCDEFGHIJ klmnop",
  SVC_DATABASE_URL: "sqlite::memory:",
});
const config = {
  ...base,
  passwordCost: MINIMAL_PASSWORD_COST,
  // The throttle counts every request here; out of the way, as for a client under its limits.
  loginThrottle: {
    maxFailures: 1000,
    backoffBaseMs: 1,
    backoffMaxMs: 1,
    clientMaxFailures: 1_000_000,
    clientWindowMs: 1000,
  },
  signup: { ...base.signup, clientMax: 1_000_000 },
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

const accounts = PAIRS + WARM;
for (let i = 0; i < accounts; i++) {
  const reply = await post("/svc-api/v1/users/create", {
    username: `user${i}`,
    email: `user${i}@example.com`,
    password: "correct horse battery",
  });
  if (reply.status !== 201) throw new Error(`sign-up: ${reply.status} ${await reply.text()}`);
}

async function ask(email: string): Promise<number> {
  const started = performance.now();
  const reply = await post("/svc-api/v1/auth/password-reset/request", { email });
  await reply.text();
  if (reply.status !== 202) throw new Error(`expected 202, got ${reply.status}`);
  return performance.now() - started;
}

for (let i = 0; i < WARM; i++) {
  await ask(`user${PAIRS + i}@example.com`);
  await ask(`warm${i}@example.com`);
}
const known: number[] = [];
const unknown: number[] = [];
for (let i = 0; i < PAIRS; i++) {
  // Alternate which goes first, so drift in the machine's speed falls on both alike.
  if (i % 2 === 0) {
    known.push(await ask(`user${i}@example.com`));
    unknown.push(await ask(`nobody${i}@example.com`));
  } else {
    unknown.push(await ask(`nobody${i}@example.com`));
    known.push(await ask(`user${i}@example.com`));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const [k, u] = [median(known), median(unknown)];
const ms = (x: number) => `${(x * 1000).toFixed(0)} µs`;
console.log(`password-reset/request, ${PAIRS} interleaved pairs, in process on SQLite:`);
console.log(`  existing account:  median ${ms(k)}`);
console.log(`  unknown address:   median ${ms(u)}`);
console.log(`  difference: ${((Math.abs(u - k) / Math.max(u, k)) * 100).toFixed(1)} % (of the larger)`);
process.exit(0);
