import { describe, expect, test } from "bun:test";
import type { Server } from "bun";
import type { InProcessVia } from "../../src/http/outer-handler.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { blockAfter, testApp } from "../helpers.ts";

/** Scrapes /svc/metrics: earlier requests are counted as they are answered. */
async function scrape(call: Awaited<ReturnType<typeof testApp>>["call"]) {
  return call("GET", "/svc/metrics");
}

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("GET /svc/metrics", () => {
  test("counts requests and their durations by method, route template and status", async () => {
    const { call, signUp } = await testApp();
    const { token, user } = await signUp();
    await call("GET", `/svc-api/v1/users/${user.id}`, { token });
    await call("GET", "/svc-api/v1/users/01937a6e-0000-7000-8000-000000000000", { token });
    await call("GET", "/no/such/path");
    const reply = await scrape(call);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toStartWith("text/plain");
    const text = reply.text;
    expect(
      sample(text, "svc_http_requests_total", { method: "GET", route: "/svc-api/v1/users/:user_id", status: "200" }),
    ).toBe(1);
    expect(sample(text, "svc_http_requests_total", { route: "/svc-api/v1/users/:user_id", status: "404" })).toBe(1);
    expect(sample(text, "svc_http_requests_total", { route: "unmatched", status: "404" })).toBe(1);
    expect(
      sample(text, "svc_http_requests_total", { method: "POST", route: "/svc-api/v1/users/create", status: "201" }),
    ).toBe(1);
    expect(
      sample(text, "svc_http_request_duration_seconds_count", { route: "/svc-api/v1/users/:user_id", status: "200" }),
    ).toBe(1);
    expect(text).not.toContain(user.id);
  });

  test("the duration histogram's buckets are cumulative and end at the count", async () => {
    const { call } = await testApp();
    for (let i = 0; i < 3; i++) await call("GET", "/svc/health/live");
    const text = (await scrape(call)).text;
    const labels = { method: "GET", route: "/svc/health/live", status: "200" };
    const bucket = (le: string) => sample(text, "svc_http_request_duration_seconds_bucket", { ...labels, le });
    const all = [
      "0.001",
      "0.0025",
      "0.005",
      "0.01",
      "0.025",
      "0.05",
      "0.1",
      "0.25",
      "0.5",
      "1",
      "2.5",
      "5",
      "+Inf",
    ].map((le) => bucket(le)!);
    expect(all.every((n, i) => i === 0 || n >= all[i - 1]!)).toBe(true);
    expect(all.at(-1)).toBe(3);
    expect(sample(text, "svc_http_request_duration_seconds_count", labels)).toBe(3);
    expect(sample(text, "svc_http_request_duration_seconds_sum", labels)).toBeGreaterThan(0);
    expect(text).toContain("# TYPE svc_http_request_duration_seconds histogram");
    expect(text).toMatch(
      /^svc_http_requests_total\{method="GET",route="\/svc\/health\/live",status="200",service="svc"\} 3$/m,
    );
  });

  test("counts GraphQL operations by name and outcome", async () => {
    const { graphql, signUp, call } = await testApp();
    const { token } = await signUp();
    await graphql("query ListThem { categories { id } }", { token });
    await graphql("query ListThem { categories { id } }", { token });
    await graphql('mutation Make { createCategory(input: { name: "" }) { id } }', { token });
    await graphql("query Broken { categories { nope } }", { token });
    const text = (await scrape(call)).text;
    expect(sample(text, "svc_graphql_operations_total", { operation: "ListThem", outcome: "ok" })).toBe(2);
    expect(sample(text, "svc_graphql_operations_total", { operation: "Make", outcome: "error" })).toBe(1);
    expect(sample(text, "svc_graphql_operations_total", { operation: "Broken", outcome: "invalid" })).toBe(1);
  });

  test("keeps the operation-name label set bounded", async () => {
    const { graphql, signUp, call } = await testApp();
    const { token } = await signUp();
    for (let i = 0; i < 110; i++) await graphql(`query Op${i} { categories { id } }`, { token });
    const text = (await scrape(call)).text;
    const names = new Set(
      [...text.matchAll(/^svc_graphql_operations_total\{[^}]*operation="([^"]+)"/gm)].map((m) => m[1]),
    );
    // The first 100 names, and "other" for the rest: 101 series, however many names arrive.
    expect(names.size).toBe(101);
    expect(names.has("Op0") && names.has("Op99") && !names.has("Op100")).toBe(true);
    expect(sample(text, "svc_graphql_operations_total", { operation: "Op99", outcome: "ok" })).toBe(1);
    expect(sample(text, "svc_graphql_operations_total", { operation: "other", outcome: "ok" })).toBe(10);
  });

  test("counts failed and throttled logins, and shows the database pool and the process", async () => {
    const { call, signUp } = await testApp({
      config: {
        loginThrottle: blockAfter(2),
      },
    });
    await signUp("ann");
    for (let i = 0; i < 3; i++)
      await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: "wrong password" } });
    const text = (await scrape(call)).text;
    expect(text).toMatch(/^svc_login_failures_total\{service="svc"\} 2$/m);
    expect(text).toMatch(/^svc_login_throttled_total\{service="svc"\} 1$/m);
    expect(sample(text, "svc_db_pool_connections", { state: "max" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "svc_db_pool_connections", { state: "busy" })).toBe(0);
    expect(text).toContain("svc_process_resident_memory_bytes");
  });

  test("svc_database_up and svc_storage_full, for alerts: 1 and 0 while the database answers with room, else 0 and 1", async () => {
    const { call } = await testApp();
    const text = (await scrape(call)).text;
    expect(sample(text, "svc_database_up")).toBe(1);
    expect(sample(text, "svc_storage_full")).toBe(0);
    // No certificate without SVC_TLS_CERT (test/e2e/tls.test.ts has the one with it).
    expect(text).not.toContain("svc_tls_certificate_expiry_timestamp_seconds");
    const down = await testApp({
      store: (store: VersionedStore): VersionedStore => ({
        ...store,
        ping: () => Promise.reject(new Error("gone")),
        storage: () => "full",
      }),
    });
    const downText = (await scrape(down.call)).text;
    expect(sample(downText, "svc_database_up")).toBe(0);
    expect(sample(downText, "svc_storage_full")).toBe(1);
  });

  test("every labelled counter shows its known label values at 0 before their first event, so rate() and alerts see them", async () => {
    const { call, graphql, signUp } = await testApp();
    let text = (await scrape(call)).text;
    expect(sample(text, "svc_subscriptions_dropped_total", { reason: "slow" })).toBe(0);
    expect(sample(text, "svc_subscriptions_dropped_total", { reason: "revoked" })).toBe(0);
    // An operation's outcomes, once its name is known.
    const { token } = await signUp();
    await graphql("query ListThem { categories { id } }", { token });
    text = (await scrape(call)).text;
    expect(sample(text, "svc_graphql_operations_total", { operation: "ListThem", outcome: "ok" })).toBe(1);
    expect(sample(text, "svc_graphql_operations_total", { operation: "ListThem", outcome: "error" })).toBe(0);
    expect(sample(text, "svc_graphql_operations_total", { operation: "ListThem", outcome: "invalid" })).toBe(0);
  });

  test("token checks by where they were answered: on PostgreSQL from memory once the instance hears its pings; no such metric on SQLite", async () => {
    const { call, signUp, store } = await testApp();
    const { token } = await signUp("ann");
    await call("GET", "/svc-api/v1/users/me", { token });
    await store.settled?.();
    for (let i = 0; i < 5; i++) expect((await call("GET", "/svc-api/v1/users/me", { token })).status).toBe(200);
    const text = (await scrape(call)).text;
    if (store.kind === "sqlite") {
      expect(text).not.toContain("svc_token_checks_total");
      return;
    }
    // The first of the five may still read the database: listening began while the one before was on its way.
    expect(sample(text, "svc_token_checks_total", { answered: "memory" })).toBeGreaterThanOrEqual(4);
    expect(sample(text, "svc_token_checks_total", { answered: "database" })).toBeGreaterThanOrEqual(1);
  });

  test("the database pool: its bound, and its open connections, busy and idle", async () => {
    const { call, signUp } = await testApp();
    await Promise.all([signUp("ann"), signUp("bob"), signUp("cyd")]);
    const text = (await scrape(call)).text;
    const [max, open, busy, idle] = ["max", "open", "busy", "idle"].map(
      (state) => sample(text, "svc_db_pool_connections", { state }) ?? NaN,
    );
    expect(max).toBeGreaterThanOrEqual(1);
    // PostgreSQL's LISTEN connection (for subscriptions) is open beside the pool's.
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(max! + 1);
    expect(busy).toBe(0);
    expect(idle).toBe(open! - busy!);
  });

  test("the exposition follows Prometheus' naming rules, and every figure is a true number", async () => {
    const { call, signUp } = await testApp();
    await signUp();
    const families = parseExposition((await scrape(call)).text);
    expect(families.size).toBeGreaterThan(8);
    for (const [name, family] of families) {
      expect({ name, valid: /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name) }).toEqual({ name, valid: true });
      expect({ name, prefixed: name.startsWith("svc_") }).toEqual({ name, prefixed: true });
      expect({ name, help: family.help.length > 0 }).toEqual({ name, help: true });
      // Counters end in _total, nothing else does; a unit, where there is one, is the base unit.
      expect({ name, type: family.type, total: name.endsWith("_total") }).toEqual({
        name,
        type: family.type,
        total: family.type === "counter",
      });
      expect({ name, units: /_(milliseconds|ms|kilobytes|megabytes|percent)(_|$)/.test(name) }).toEqual({
        name,
        units: false,
      });
      for (const sample of family.samples)
        expect({ sample: sample.line, finite: Number.isFinite(sample.value) }).toEqual({
          sample: sample.line,
          finite: true,
        });
    }
    // Figures that mislead under Bun are gone; what is reported is Bun's and true.
    expect([...families.keys()].filter((n) => n.startsWith("svc_nodejs_") || n === "svc_process_heap_bytes")).toEqual(
      [],
    );
    const build = families.get("svc_build_info")!.samples[0]!;
    expect(build.line).toContain(`bun="${Bun.version}"`);
    expect(build.line).toContain(`version="${(await import("../../package.json")).version}"`);
    const rss = families.get("svc_process_resident_memory_bytes")!.samples[0]!.value;
    expect(rss).toBeGreaterThan(10e6);
    expect(rss).toBeLessThan(4e9);
    const heap = families.get("svc_js_heap_used_bytes")!.samples[0]!.value;
    expect(heap).toBeGreaterThan(1e6);
    expect(heap).toBeLessThan(rss);
  });

  test("is 404 with SVC_METRICS=false", async () => {
    const { call } = await testApp({ config: { metrics: false } });
    expect((await call("GET", "/svc/metrics")).status).toBe(404);
  });
});

describe("health probes", () => {
  test("/svc/health/live answers while the process runs; /svc/health/ready while the database answers", async () => {
    const { call } = await testApp();
    expect((await call("GET", "/svc/health/live")).body).toEqual({ status: "ok" });
    expect(await call("GET", "/svc/health/ready")).toMatchObject({
      status: 200,
      body: { status: "ok", checks: { database: "ok" } },
    });
    const down = await testApp({
      store: (store: VersionedStore): VersionedStore => ({ ...store, ping: () => Promise.reject(new Error("gone")) }),
    });
    expect((await down.call("GET", "/svc/health/live")).status).toBe(200);
    expect(await down.call("GET", "/svc/health/ready")).toMatchObject({ status: 503, body: { status: "unavailable" } });
  });
});

describe("the request log line", () => {
  test("names the route template beside the path", async () => {
    const { call, signUp, logs } = await testApp();
    const { token, user } = await signUp();
    await call("GET", `/svc-api/v1/users/${user.id}`, { token, headers: { "x-request-id": "route-1" } });
    const line = (await logs())
      .map((l) => JSON.parse(l))
      .find((l) => l.client_request_id === "route-1" && l.msg === "request completed");
    expect(line).toMatchObject({
      route: "/svc-api/v1/users/:user_id",
      path: `/svc-api/v1/users/${user.id}`,
      status: 200,
      user_id: user.id,
    });
  });

  test("has pino's shape: level, ISO time and service first, the message last, no user when anonymous", async () => {
    const { call, logs } = await testApp();
    await call("GET", "/svc/health/live?x=%22%5C", { headers: { "x-request-id": "shape-1" } });
    const raw = (await logs()).find((l) => l.includes('"shape-1"') && l.includes("request completed"))!;
    const line = JSON.parse(raw);
    expect(Object.keys(line)).toEqual([
      "level",
      "time",
      "service",
      "request_id",
      "client_request_id",
      "method",
      "route",
      "path",
      "status",
      "duration_ms",
      "client_address",
      "user_agent",
      "msg",
    ]);
    expect(line).toMatchObject({
      level: "info",
      service: "svc",
      method: "GET",
      route: "/svc/health/live",
      path: "/svc/health/live",
      status: 200,
      msg: "request completed",
    });
    expect(new Date(line.time).toISOString()).toBe(line.time);
  });

  test("names the client's address (as SVC_TRUST_PROXY reads it) and its user agent, for fail2ban and abuse reports", async () => {
    const lineOf = async (app: Awaited<ReturnType<typeof testApp>>, id: string) =>
      (await app.logs())
        .map((l) => JSON.parse(l))
        .find((l) => l.client_request_id === id && l.msg === "request completed");
    const direct = await testApp();
    await direct.call("GET", "/svc/health/live", {
      headers: { "x-request-id": "ua-1", "user-agent": "curl/8.5.0", "x-forwarded-for": "198.51.100.7" },
      via: peer("203.0.113.4"),
    });
    // Without SVC_TRUST_PROXY the header is the client's own words: the socket's address counts.
    expect(await lineOf(direct, "ua-1")).toMatchObject({ client_address: "203.0.113.4", user_agent: "curl/8.5.0" });

    const proxied = await testApp({ config: { trustProxy: 1 } });
    const agent = `Mozilla/5.0 "quoted" \\ ${"x".repeat(1000)}`;
    await proxied.call("GET", "/svc/health/live", {
      headers: { "x-request-id": "ua-2", "user-agent": agent, "x-forwarded-for": "192.0.2.1, 198.51.100.7" },
      via: peer("127.0.0.1"),
    });
    const line = await lineOf(proxied, "ua-2");
    expect(line.client_address).toBe("198.51.100.7");
    // Kept to its first 256 characters: a header of any size must not make a line of any size.
    expect(line.user_agent).toBe(agent.slice(0, 256));

    const bare = await testApp();
    await bare.call("GET", "/svc/health/live", { headers: { "x-request-id": "ua-3" } });
    expect(await lineOf(bare, "ua-3")).toMatchObject({ client_address: "unknown", user_agent: null });
  });
});

/** A server whose every request comes from `address`, as Bun's requestIP reports it. */
function peer(address: string): InProcessVia {
  const server = { requestIP: () => ({ address, family: address.includes(":") ? "IPv6" : "IPv4", port: 50_000 }) };
  return { server: server as unknown as Server<unknown> };
}

interface Family {
  type: string;
  help: string;
  samples: Array<{ line: string; value: number }>;
}

/** Prometheus' text exposition format: # HELP and # TYPE lines, then samples (histograms' _bucket/_sum/_count under their family). */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let found = families.get(name);
    if (!found) families.set(name, (found = { type: "untyped", help: "", samples: [] }));
    return found;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      if (meta[1] === "HELP") family(meta[2]!).help = meta[3]!;
      else family(meta[2]!).type = meta[3]!;
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    expect({ line, parsed: sample !== null }).toEqual({ line, parsed: true });
    const name = sample![1]!;
    const histogram =
      /_(bucket|sum|count)$/.test(name) && families.get(name.replace(/_(bucket|sum|count)$/, ""))?.type === "histogram";
    family(histogram ? name.replace(/_(bucket|sum|count)$/, "") : name).samples.push({
      line,
      value: Number(sample![3]),
    });
  }
  return families;
}
