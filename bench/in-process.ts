// `bun run bench:in-process`: what one authenticated read costs svc itself, without HTTP: app.handle()
// on a users page and on a kept GraphQL answer, each also revalidated (a 304), on a SQLite file of 1,000
// users and 50 categories, best of 3 runs of 20,000. For A/B work on the request path (the figures in
// docs/performance.md); on a noisy machine, alternate the two builds and compare the best of several.
// Then what global Elysia hooks cost a bare route, sync and async.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { createApp } from "../src/app.ts";
import { parseConfig } from "../src/config/index.ts";
import { openStore } from "../src/db/open.ts";
import { createLoggers } from "../src/observability/log.ts";

const RUNS = 3;
const REQUESTS = 20_000;
const PASSWORD = "bench password 1";

const dir = mkdtempSync(join(tmpdir(), "svc-in-process-"));
const config = parseConfig({
  SVC_DATABASE_URL: `sqlite:${join(dir, "svc.db")}`,
  SVC_JWT_SECRET: "bench-secret: 0123456789 ABCDEFGHIJ klmnop",
});
const store = await openStore(config.database);
const hash = await Bun.password.hash(PASSWORD, { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 });
const at = new Date().toISOString();
const users = Array.from({ length: 1000 }, (_, i) => ({
  id: Bun.randomUUIDv7(),
  username: `user${i}`,
  email: `user${i}@example.com`,
  passwordHash: hash,
  tokenVersion: 0,
  createdAt: at,
  updatedAt: at,
  role: "user" as const,
  status: "active" as const,
  lastLoginAt: null,
  emailVerifiedAt: null,
}));
const categories = Array.from({ length: 50 }, (_, i) => ({
  id: Bun.randomUUIDv7(),
  name: `Category ${i}`,
  description: `The description of category ${i}`,
  colorHex: "#64748B",
  icon: "tag",
  createdBy: users[0]!.id,
  createdAt: at,
  updatedAt: at,
  version: 1,
}));
async function* batches() {
  yield users;
}
await store.load({ users: batches(), categories }, { replace: true, expect: { users: 1000, categories: 50 } });

// The access log goes to /dev/null's equivalent: a sink that drops lines, as a file would take them.
const app = createApp({ config, store, loggers: createLoggers("info", { write: () => {} }) });
const login = await app.handle(
  new Request("http://svc.local/svc-api/v1/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "user1", password: PASSWORD }),
  }),
);
const { token } = (await login.json()) as { token: string };
const authorization = `Bearer ${token}`;
const categoriesQuery = "{ categories { id name description colorHex icon } }";
const query = JSON.stringify({ query: categoriesQuery });
const usersPage = "http://svc.local/svc-api/v1/users/all?limit=100";
const graphqlGet = `http://svc.local/graphql?query=${encodeURIComponent(categoriesQuery)}`;
/** The tag a revalidating client sends back: the one svc gave for this read. */
const tagOf = async (url: string) =>
  (await app.handle(new Request(url, { headers: { authorization } }))).headers.get("etag")!;
const usersTag = await tagOf(usersPage);
const graphqlTag = await tagOf(graphqlGet);

const cases: Record<string, () => Request> = {
  "GET users/all?limit=100": () => new Request(usersPage, { headers: { authorization } }),
  "GET users/all?limit=100, If-None-Match → 304": () =>
    new Request(usersPage, { headers: { authorization, "if-none-match": usersTag } }),
  "GraphQL categories (kept answer)": () =>
    new Request("http://svc.local/graphql", {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: query,
    }),
  "GraphQL categories by GET, If-None-Match → 304": () =>
    new Request(graphqlGet, { headers: { authorization, "if-none-match": graphqlTag } }),
  "GET /svc/health": () => new Request("http://svc.local/svc/health"),
};
for (const [name, request] of Object.entries(cases)) {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    for (let i = 0; i < REQUESTS; i++) await (await app.handle(request())).text();
    best = Math.min(best, ((performance.now() - started) * 1000) / REQUESTS);
  }
  console.log(`- ${name}: ${best.toFixed(2)} µs a request`);
}

// What a global hook costs a bare route, by how Elysia compiles it: only a hook it takes for async makes the
// route's handler async, and Elysia 1.4.30 takes a hook for async by its source (bench/results.md, #54).
const noop = () => {};
const hooked = {
  "no hooks": new Elysia(),
  "sync onRequest and mapResponse": new Elysia()
    .onRequest(function begin() {})
    .mapResponse({ as: "global" }, function end() {
      noop();
    }),
  "sync, but a mapResponse that returns a call": new Elysia()
    .onRequest(function begin() {})
    .mapResponse({ as: "global" }, function end() {
      return noop();
    }),
  "async onRequest and mapResponse": new Elysia()
    .onRequest(async function begin() {})
    .mapResponse({ as: "global" }, async function end() {}),
};
for (const [name, hooks] of Object.entries(hooked)) {
  const bare = new Elysia().use(hooks).get("/", () => new Response("ok"));
  const fetch = bare.fetch;
  const sync = !(fetch(new Request("http://svc.local/")) instanceof Promise);
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      const answer = fetch(new Request("http://svc.local/"));
      if (answer instanceof Promise) await answer;
    }
    best = Math.min(best, ((performance.now() - started) * 1000) / REQUESTS);
  }
  console.log(`- Elysia, ${name}: ${best.toFixed(2)} µs a request (${sync ? "sync" : "async"} handler)`);
}
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
