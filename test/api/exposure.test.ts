// What svc says about itself, and to whom (src/http/exposure.ts): the operations paths on the operations
// listener alone when there is one; metrics behind a token or the box's own loopback in production; health's
// details for the box, the operations listener, or anyone outside production; HSTS in production over TLS.
// In process, each request handed over as serve.ts's listeners hand it: its listener, and a server that
// knows its peer's address.
import { describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { version } from "../../package.json";
import { isLoopback } from "../../src/http/exposure.ts";
import type { InProcessVia } from "../../src/http/outer-handler.ts";
import { expectProblem, type ConfigOverrides, testApp } from "../helpers.ts";

/** A server whose every request comes from `address`, as Bun's requestIP reports it. */
function peer(address: string, listener: InProcessVia["listener"] = "public"): InProcessVia {
  const family = address.includes(":") ? "IPv6" : "IPv4";
  const server = { requestIP: () => ({ address, family, port: 50_000 }) } as unknown as Server<unknown>;
  return { listener, server };
}

const STRANGER = peer("203.0.113.7");
const ON_THE_BOX = peer("127.0.0.1");
const OPS = peer("10.0.0.5", "ops");
const TOKEN = "metrics-token-of-at-least-24-characters";

const PRODUCTION: ConfigOverrides = { env: "production" };
/**
 * What health tells a stranger to a production svc: the interface document's service, version and
 * environment (a monitor written to it must work in production too), the status and the checks.
 */
const brief = (status: string) => ({
  service: "svc",
  version,
  environment: "production",
  status,
  checks: { database: "ok", storage: "ok" },
});
const WITH_OPS: ConfigOverrides = {
  env: "production",
  opsAddress: { host: "127.0.0.1", port: 9090 },
  // Off by default in production; on here, to show where it is served.
  graphql: { playground: true },
};

/** Every operations path: metrics, the console and its files, the API docs and their files, GraphiQL. */
async function opsPaths(call: Awaited<ReturnType<typeof testApp>>["call"]): Promise<string[]> {
  const page = await call("GET", "/svc/admin", { via: OPS });
  const consoleFiles = [...page.text.matchAll(/(?:src|href)="(\/svc\/admin\/[^"]+)"/g)].map((m) => m[1]!);
  expect(consoleFiles).toHaveLength(2);
  return [
    "/svc/metrics",
    "/svc/admin",
    "/svc/admin/",
    ...consoleFiles,
    "/svc-api/docs",
    "/svc-api/docs/assets/swagger-ui.css",
    "/svc-api/docs/assets/swagger-ui-bundle.js",
    "/svc-api/openapi.json",
    "/graphql/playground",
  ];
}

describe("with an operations listener (SVC_OPS_ADDRESS)", () => {
  test("it serves metrics, the console, the API docs and GraphiQL; the public listener answers 404 not_found there", async () => {
    const { call } = await testApp({ config: WITH_OPS });
    for (const path of await opsPaths(call)) {
      expect({ path, status: (await call("GET", path, { via: OPS })).status }).toEqual({ path, status: 200 });
      for (const via of [STRANGER, ON_THE_BOX]) {
        const refused = await call("GET", path, { via });
        expectProblem(refused, 404, "not_found");
        expect(refused.body.detail).toBe(`Nothing lives at ${path}.`);
      }
    }
  });

  test("the public listener's 404 is the same for every method and for a trailing slash: no 405 names GET", async () => {
    const { call } = await testApp({ config: WITH_OPS });
    for (const [method, path] of [
      ["POST", "/svc/metrics"],
      ["DELETE", "/svc/admin"],
      ["HEAD", "/svc-api/openapi.json"],
      ["OPTIONS", "/svc-api/docs"],
      ["GET", "/svc/metrics/"],
      ["PUT", "/graphql/playground/"],
    ] as const) {
      const reply = await call(method, path, { via: STRANGER });
      expect({ method, path, status: reply.status, allow: reply.headers.get("allow") }).toEqual({
        method,
        path,
        status: 404,
        allow: null,
      });
    }
    // On the operations listener the same request is a 405, as anywhere else in svc.
    expectProblem(await call("POST", "/svc/metrics", { via: OPS }), 405, "method_not_allowed");
  });

  test("both serve health, the REST API (which the console calls) and GraphQL", async () => {
    const { call, signUp, graphql } = await testApp({ config: WITH_OPS });
    const { token } = await signUp();
    for (const via of [STRANGER, OPS]) {
      expect((await call("GET", "/svc/health", { via })).status).toBe(200);
      expect((await call("GET", "/svc/health/ready", { via })).status).toBe(200);
      expect((await call("GET", "/svc-api/v1/users/me", { token, via })).status).toBe(200);
    }
    expect((await graphql("{ categories { id } }", { token })).body).toEqual({ data: { categories: [] } });
    const created = await call("POST", "/svc-api/v1/users/create", {
      via: OPS,
      body: { username: "ops-made", email: "ops@example.com", password: "correct horse battery" },
    });
    expect(created.status).toBe(201);
  });

  test("a refused operations path is counted as unmatched, like any other 404", async () => {
    const { call } = await testApp({ config: WITH_OPS });
    await call("GET", "/svc/admin", { via: STRANGER });
    const metrics = (await call("GET", "/svc/metrics", { via: OPS })).text;
    expect(metrics).toMatch(/^svc_http_requests_total\{[^}]*route="unmatched",status="404"[^}]*\} 1$/m);
    expect(metrics).not.toMatch(/route="\/svc\/admin"/);
  });

  test("the metrics token, when set, is needed there too", async () => {
    const { call } = await testApp({ config: { ...WITH_OPS, metricsToken: TOKEN } });
    expectProblem(await call("GET", "/svc/metrics", { via: OPS }), 401, "unauthorized");
    expect((await call("GET", "/svc/metrics", { via: OPS, token: TOKEN })).status).toBe(200);
  });
});

describe("without an operations listener, in production, /svc/metrics", () => {
  test("is served to a client on the box's loopback, and is 404 not_found to any other", async () => {
    const { call } = await testApp({ config: PRODUCTION });
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) {
      const reply = await call("GET", "/svc/metrics", { via: peer(address) });
      expect({ address, status: reply.status }).toEqual({ address, status: 200 });
      expect(reply.text).toContain("svc_http_requests_total");
    }
    for (const address of ["203.0.113.7", "10.0.0.5", "::ffff:10.0.0.5", "2001:db8::1"]) {
      const reply = await call("GET", "/svc/metrics", { via: peer(address) });
      expectProblem(reply, 404, "not_found");
      expect(reply.body.detail).toBe("Nothing lives at /svc/metrics.");
    }
    // In process, with no socket at all: not the box.
    expectProblem(await call("GET", "/svc/metrics"), 404, "not_found");
  });

  test("goes by the socket's address: X-Forwarded-For does not make a stranger local", async () => {
    const { call } = await testApp({ config: { ...PRODUCTION, trustProxy: 1 } });
    const forged = await call("GET", "/svc/metrics", { via: STRANGER, headers: { "x-forwarded-for": "127.0.0.1" } });
    expectProblem(forged, 404, "not_found");
  });

  test("is 404 through a trusted proxy on the box: its X-Forwarded-For says the client is elsewhere", async () => {
    const { call } = await testApp({ config: { ...PRODUCTION, trustProxy: 1 } });
    const proxied = await call("GET", "/svc/metrics", {
      via: ON_THE_BOX,
      headers: { "x-forwarded-for": "127.0.0.1, 203.0.113.7" },
    });
    expectProblem(proxied, 404, "not_found");
    expect((await call("GET", "/svc/metrics", { via: ON_THE_BOX })).status).toBe(200);
  });

  test("without SVC_TRUST_PROXY too, a request a proxy on the box forwarded is not the box's own", async () => {
    // A proxy left out of SVC_TRUST_PROXY by mistake must not hand strangers the metrics.
    const { call } = await testApp({ config: PRODUCTION });
    const forwarded: Array<Record<string, string>> = [
      { "x-forwarded-for": "203.0.113.7" },
      { forwarded: "for=203.0.113.7" },
      { "x-real-ip": "203.0.113.7" },
    ];
    for (const header of forwarded) {
      expectProblem(await call("GET", "/svc/metrics", { via: ON_THE_BOX, headers: header }), 404, "not_found");
      expect((await call("GET", "/svc/health", { via: ON_THE_BOX, headers: header })).body).toEqual(brief("ok"));
    }
    expect((await call("GET", "/svc/metrics", { via: ON_THE_BOX })).status).toBe(200);
  });

  test("with SVC_METRICS_TOKEN needs it as a Bearer token, from anywhere: 401 with WWW-Authenticate otherwise", async () => {
    const { call } = await testApp({ config: { ...PRODUCTION, metricsToken: TOKEN } });
    expect((await call("GET", "/svc/metrics", { via: STRANGER, token: TOKEN })).status).toBe(200);
    expect(
      (await call("GET", "/svc/metrics", { via: STRANGER, headers: { authorization: `bearer ${TOKEN}` } })).status,
    ).toBe(200);

    const missing = await call("GET", "/svc/metrics", { via: STRANGER });
    expectProblem(missing, 401, "unauthorized");
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="svc metrics"');
    // The box's loopback is no exception once a token is set.
    expectProblem(await call("GET", "/svc/metrics", { via: ON_THE_BOX }), 401, "unauthorized");

    for (const authorization of [
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      "Bearer ",
      `Basic ${TOKEN}`,
      TOKEN,
    ]) {
      const wrong = await call("GET", "/svc/metrics", { via: STRANGER, headers: { authorization } });
      expectProblem(wrong, 401, "unauthorized");
      expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="svc metrics", error="invalid_token"');
    }
  });

  test("SVC_METRICS=false is still 404 for everyone", async () => {
    const { call } = await testApp({ config: { ...PRODUCTION, metrics: false } });
    expectProblem(await call("GET", "/svc/metrics", { via: ON_THE_BOX }), 404, "not_found");
  });
});

describe("outside production nothing changes", () => {
  test("metrics, the console and the API docs answer anyone; health says everything", async () => {
    const { call } = await testApp();
    for (const path of ["/svc/metrics", "/svc/admin", "/svc-api/docs", "/svc-api/openapi.json", "/graphql/playground"])
      expect({ path, status: (await call("GET", path, { via: STRANGER })).status }).toEqual({ path, status: 200 });
    expect((await call("GET", "/svc/health", { via: STRANGER })).body).toMatchObject({ version, environment: "test" });
  });
});

describe("/svc/health in production", () => {
  test("tells a stranger its service, version, environment, status and checks, and nothing of database or uptime", async () => {
    const { call } = await testApp({ config: PRODUCTION });
    for (const via of [STRANGER, peer("::ffff:10.0.0.5"), undefined]) {
      const reply = await call("GET", "/svc/health", { via });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(brief("ok"));
    }
  });

  test("tells the box's loopback (without an operations listener) and the operations listener everything", async () => {
    const plain = await testApp({ config: PRODUCTION });
    const withOps = await testApp({ config: { ...PRODUCTION, opsAddress: { host: "127.0.0.1", port: 9090 } } });
    for (const [call, via] of [
      [plain.call, ON_THE_BOX],
      [plain.call, peer("::1")],
      [withOps.call, OPS],
    ] as const) {
      const reply = await call("GET", "/svc/health", { via });
      expect(reply.body).toMatchObject({ service: "svc", version, environment: "production", status: "ok" });
      expect(Object.keys(reply.body).sort()).toEqual(
        // mail: testConfig's mail is on (logged), as in development and test without SVC_SMTP_URL.
        ["checks", "database_kind", "environment", "mail", "service", "status", "uptime_s", "version"].sort(),
      );
    }
  });

  test("with an operations listener, only it hears the details: the public one is brief even to the box", async () => {
    // A proxy in TCP mode (haproxy, stunnel, ssh -R) adds no forwarding header: on the public listener its
    // strangers would look like the box itself.
    const { call } = await testApp({ config: WITH_OPS });
    expect((await call("GET", "/svc/health", { via: ON_THE_BOX })).body).toEqual(brief("ok"));
    expect((await call("GET", "/svc/health", { via: OPS })).body).toHaveProperty("version");
  });

  test("a trusted proxy on the box forwards a stranger: the brief answer", async () => {
    const { call } = await testApp({ config: { ...PRODUCTION, trustProxy: 1 } });
    const reply = await call("GET", "/svc/health", { via: ON_THE_BOX, headers: { "x-forwarded-for": "203.0.113.7" } });
    expect(reply.body).toEqual(brief("ok"));
  });

  test("live and ready say the same to everyone", async () => {
    const { call } = await testApp({ config: PRODUCTION });
    expect((await call("GET", "/svc/health/live", { via: STRANGER })).body).toEqual({ status: "ok" });
    expect((await call("GET", "/svc/health/ready", { via: STRANGER })).body).toEqual({
      status: "ok",
      checks: { database: "ok", storage: "ok" },
    });
  });
});

describe("Strict-Transport-Security", () => {
  const TLS = { certPath: "/etc/svc/cert.pem", keyPath: "/etc/svc/key.pem" };

  test("is on every public answer in production over TLS, errors included; never on the operations listener", async () => {
    const { call } = await testApp({ config: { ...WITH_OPS, tls: TLS } });
    for (const [path, status] of [
      ["/svc/health", 200],
      ["/svc/health/live", 200],
      ["/no/such/path", 404],
      ["/svc/metrics", 404],
      ["/svc-api/v1/users/me", 401],
    ] as const) {
      const reply = await call("GET", path, { via: STRANGER });
      expect({ path, status: reply.status, hsts: reply.headers.get("strict-transport-security") }).toEqual({
        path,
        status,
        hsts: "max-age=31536000",
      });
    }
    expect((await call("GET", "/svc/health", { via: OPS })).headers.get("strict-transport-security")).toBeNull();
  });

  test("is not sent without TLS, nor outside production", async () => {
    for (const config of [PRODUCTION, { tls: TLS }]) {
      const { call } = await testApp({ config });
      expect((await call("GET", "/svc/health", { via: STRANGER })).headers.get("strict-transport-security")).toBeNull();
    }
  });
});

describe("over real sockets (the listeners' own fetch, Bun's requestIP)", () => {
  test("a client on 127.0.0.1 is local; the operations listener serves what the public one refuses", async () => {
    const { app } = await testApp({ config: WITH_OPS });
    const options = { hostname: "127.0.0.1", port: 0, reusePort: false };
    const publicServer = app.listen(options);
    const opsServer = app.listen(options, "ops");
    try {
      const publicUrl = `http://127.0.0.1:${publicServer.port}`;
      const opsUrl = `http://127.0.0.1:${opsServer.port}`;
      expect((await fetch(`${publicUrl}/svc/admin`)).status).toBe(404);
      expect((await fetch(`${opsUrl}/svc/admin`)).status).toBe(200);
      expect((await fetch(`${opsUrl}/svc/metrics`)).status).toBe(200);
      // Production, from this box's loopback: the whole health answer on the operations listener, the brief
      // one on the public listener (only the operations listener is inside once there is one).
      expect(await (await fetch(`${opsUrl}/svc/health`)).json()).toHaveProperty("uptime_s");
      expect(await (await fetch(`${publicUrl}/svc/health`)).json()).not.toHaveProperty("uptime_s");
    } finally {
      publicServer.stop(true);
      opsServer.stop(true);
    }
  });
});

test("isLoopback knows 127.0.0.0/8, ::1 and IPv4-mapped loopback, and nothing else", () => {
  for (const address of ["127.0.0.1", "127.255.0.1", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(address)).toBe(true);
  for (const address of ["10.0.0.1", "::", "0.0.0.0", "::ffff:10.0.0.1", "1.127.0.0", "fe80::1", undefined])
    expect(isLoopback(address)).toBe(false);
});
