// The compiled binary's second, operations listener (SVC_OPS_ADDRESS) in production, and production
// without one (test/e2e/support/tls.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { freePort } from "../ports.ts";
import {
  cleanUpTls,
  emptyFolderWithBinary,
  json,
  METRICS_TOKEN,
  OUTSIDE,
  pki,
  prepareTls,
  SECRET,
  start,
  stop,
} from "./support/tls.ts";
import { runProcessSync } from "../support/cli.ts";
import { svcIn } from "./support/tls.ts";

beforeAll(prepareTls, 120_000);
afterAll(cleanUpTls);

describe("the operations listener, in production", () => {
  test("serves metrics, the console, the API docs and GraphiQL, which the public listener answers 404; health in full", async () => {
    const dir = emptyFolderWithBinary();
    const opsPort = freePort();
    const env = {
      SVC_ENV: "production",
      SVC_HOST: OUTSIDE ? "0.0.0.0" : "127.0.0.1",
      SVC_OPS_ADDRESS: `127.0.0.1:${opsPort}`,
      SVC_GRAPHQL_PLAYGROUND: "true",
    };
    const running = await start(dir, env);
    expect(running.ops).toBe(`http://127.0.0.1:${opsPort}`);
    const publicBase = running.base.replace("0.0.0.0", "127.0.0.1");
    const ops = running.ops!;

    // Before the app has loaded (the probes answer alone) and after.
    for (const moment of ["before the app", "after it"]) {
      if (OUTSIDE) {
        const stranger = await fetch(`http://${OUTSIDE}:${new URL(publicBase).port}/svc/health`);
        expect({ moment, body: await stranger.json() }).toEqual({
          moment,
          body: {
            service: "svc",
            version: expect.any(String),
            environment: "production",
            status: "ok",
            checks: { database: "ok", storage: "ok" },
          },
        });
      }
      const full = await (await fetch(`${ops}/svc/health`)).json();
      expect({ moment, body: full }).toMatchObject({
        moment,
        body: { environment: "production", database_kind: "sqlite" },
      });
      await fetch(`${publicBase}/svc-api/v1/users/me`);
    }

    const page = await (await fetch(`${ops}/svc/admin`)).text();
    const consoleFiles = [...page.matchAll(/(?:src|href)="(\/svc\/admin\/[^"]+)"/g)].map((m) => m[1]!);
    expect(consoleFiles).toHaveLength(2);
    const paths = [
      "/svc/metrics",
      "/svc/admin",
      ...consoleFiles,
      "/svc-api/docs",
      "/svc-api/docs/assets/swagger-ui.css",
      "/svc-api/openapi.json",
      "/graphql/playground",
    ];
    for (const path of paths) {
      expect({ path, status: (await fetch(`${ops}${path}`)).status }).toEqual({ path, status: 200 });
      const refused = await fetch(`${publicBase}${path}`);
      expect({ path, status: refused.status, type: refused.headers.get("content-type") }).toEqual({
        path,
        status: 404,
        type: "application/problem+json",
      });
      expect(await refused.json()).toMatchObject({ code: "not_found", detail: `Nothing lives at ${path}.` });
    }
    // The console's calls to the REST API work on the operations listener.
    const created = await fetch(`${ops}/svc-api/v1/users/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "opal", email: "opal@example.com", password: "correct horse" }),
    });
    expect(created.status).toBe(201);

    const check = runProcessSync([...svcIn(dir), "healthcheck"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "1", SVC_JWT_SECRET: SECRET, ...env },
    });
    expect({ code: check.code, stderr: check.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("a taken operations port stops start-up with one line naming SVC_OPS_ADDRESS", async () => {
    const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const dir = emptyFolderWithBinary();
      const proc = runProcessSync([...svcIn(dir)], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          SVC_PORT: "0",
          SVC_HOST: "127.0.0.1",
          SVC_OPS_ADDRESS: `127.0.0.1:${holder.port}`,
        },
      });
      expect({ code: proc.code, stderr: proc.stderr }).toEqual({
        code: 1,
        stderr: `svc: cannot listen on 127.0.0.1:${holder.port}: the port is in use (another svc?); stop it, choose another SVC_OPS_ADDRESS's port, or set SVC_REUSE_PORT=true to share the port on purpose\n`,
      });
    } finally {
      holder.stop(true);
    }
  }, 30_000);

  test("with TLS, a public port some other process holds is refused as without it", async () => {
    const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, reusePort: true, fetch: () => new Response("other") });
    try {
      const dir = emptyFolderWithBinary();
      const proc = runProcessSync([...svcIn(dir)], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          SVC_PORT: String(holder.port),
          SVC_HOST: "127.0.0.1",
          SVC_TLS_CERT: pki.a.chain,
          SVC_TLS_KEY: pki.a.key,
        },
      });
      expect({ code: proc.code, stderr: proc.stderr }).toEqual({
        code: 1,
        stderr: `svc: cannot listen on 127.0.0.1:${holder.port}: the port is in use (another svc?); stop it, choose another SVC_PORT, or set SVC_REUSE_PORT=true to share the port on purpose\n`,
      });
    } finally {
      holder.stop(true);
    }
  }, 30_000);
});

describe("without an operations listener, in production", () => {
  test.skipIf(!OUTSIDE)(
    "metrics and health's details are the box's alone; SVC_METRICS_TOKEN opens metrics to its holder",
    async () => {
      const plain = await start(emptyFolderWithBinary(), { SVC_ENV: "production", SVC_HOST: "0.0.0.0" });
      const port = new URL(plain.base).port;
      const local = `http://127.0.0.1:${port}`;
      const outside = `http://${OUTSIDE}:${port}`;
      expect((await fetch(`${local}/svc/metrics`)).status).toBe(200);
      expect((await fetch(`${outside}/svc/metrics`)).status).toBe(404);
      expect(await (await fetch(`${local}/svc/health`)).json()).toMatchObject({ environment: "production" });
      expect(Object.keys(await (await fetch(`${outside}/svc/health`)).json())).toEqual([
        "service",
        "version",
        "environment",
        "status",
        "checks",
      ]);
      expect(await stop(plain)).toBe(0);

      const guarded = await start(emptyFolderWithBinary(), {
        SVC_ENV: "production",
        SVC_HOST: "0.0.0.0",
        SVC_METRICS_TOKEN: METRICS_TOKEN,
      });
      const guardedPort = new URL(guarded.base).port;
      for (const host of ["127.0.0.1", OUTSIDE!]) {
        const url = `http://${host}:${guardedPort}/svc/metrics`;
        const refused = await fetch(url);
        expect({ host, status: refused.status, challenge: refused.headers.get("www-authenticate") }).toEqual({
          host,
          status: 401,
          challenge: 'Bearer realm="svc metrics"',
        });
        expect((await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
      }
      expect(await stop(guarded)).toBe(0);
    },
    30_000,
  );
});
