// Drives the compiled binary (test/e2e/support/svc.ts): built once, copied alone into an empty folder, started
// for real. Here: every surface, bodies, errors as logged and as answered, production, usage. Signals and exits
// are in binary-signals.test.ts, loading and streams in binary-loading.test.ts, the walkthroughs in
// binary-walkthrough.test.ts.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { postgresAvailable } from "../postgres.ts";
import { runProcessSync } from "../support/cli.ts";
import { emptyFolderWithBinary, json, prepareBinary, scratchFolder, start, stop, svcIn } from "./support/svc.ts";

const pgAvailable = await postgresAvailable();

beforeAll(prepareBinary, 120_000);

describe("the compiled binary, alone in an empty folder", () => {
  test("creates data/svc.db, serves every surface, and keeps data across a restart", async () => {
    const dir = emptyFolderWithBinary();
    const first = await start(dir);
    expect(existsSync(join(dir, "data", "svc.db"))).toBe(true);
    // Written whole from the image the build made: the scratch file it went through is gone.
    expect(readdirSync(join(dir, "data")).filter((name) => !name.startsWith("svc.db-"))).toEqual(["svc.db"]);

    const health = await json(first.base, "GET", "/svc/health");
    expect(health.status).toBe(200);
    expect(health.headers.get("server")).toBeNull();
    expect(health.headers.get("x-powered-by")).toBeNull();
    expect(health.body).toMatchObject({
      service: "svc",
      environment: "development",
      database_kind: "sqlite",
      status: "ok",
      checks: { database: "ok" },
    });

    // The admin console, built into the binary: the page and both of its assets.
    const consolePage = await fetch(`${first.base}/svc/admin`);
    expect(consolePage.status).toBe(200);
    expect(consolePage.headers.get("content-security-policy")).toContain("default-src 'self'");
    const assets = [...(await consolePage.text()).matchAll(/(?:src|href)="(\/svc\/admin\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const reply = await fetch(`${first.base}${asset}`);
      expect(reply.status).toBe(200);
      expect((await reply.text()).length).toBeGreaterThan(1000);
    }

    const created = await json(first.base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    expect(created.status).toBe(201);
    const login = await json(first.base, "POST", "/svc-api/v1/auth/login", {
      username: "ann",
      password: "correct horse",
    });
    expect(login.status).toBe(200);
    const token = login.body.token;
    expect((await json(first.base, "GET", "/svc-api/v1/users/all", undefined, token)).body).toHaveLength(1);

    const mutation = await json(
      first.base,
      "POST",
      "/graphql",
      { query: 'mutation { createCategory(input: { name: "Books" }) { id colorHex } }' },
      token,
    );
    expect(mutation.body.data.createCategory.colorHex).toBe("#64748B");

    const playground = await fetch(`${first.base}/graphql/playground`);
    expect(playground.status).toBe(200);
    expect(await playground.text()).toContain("YogaGraphiQL");

    // The REST reference and its assets, metrics and probes come from inside the binary too.
    expect((await json(first.base, "GET", "/svc-api/openapi.json")).body.openapi).toBe("3.1.0");
    expect((await fetch(`${first.base}/svc-api/docs`)).status).toBe(200);
    const bundle = await fetch(`${first.base}/svc-api/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
    expect((await fetch(`${first.base}/svc-api/docs/assets/swagger-ui.css`)).status).toBe(200);
    expect(await (await fetch(`${first.base}/svc/metrics`)).text()).toContain("svc_http_requests_total");
    expect((await json(first.base, "GET", "/svc/health/ready")).status).toBe(200);
    expect((await json(first.base, "GET", "/svc/health/live")).body).toEqual({ status: "ok" });

    expect(await stop(first)).toBe(0);
    expect(first.output()).toContain('"svc stopped"');

    const second = await start(dir);
    // Same secret, same database: the token from before the restart still works.
    const list = await json(second.base, "POST", "/graphql", { query: "{ categories { name } }" }, token);
    expect(list.body).toEqual({ data: { categories: [{ name: "Books" }] } });
    expect(
      (await json(second.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" }))
        .status,
    ).toBe(200);
    expect(await stop(second)).toBe(0);
  }, 30_000);

  test("answers bodies past SVC_MAX_BODY_BYTES with 413, declared or chunked", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir, { SVC_MAX_BODY_BYTES: "2048" });
    const big = JSON.stringify({ username: "x".repeat(3000) });
    const declared = await fetch(`${running.base}/svc-api/v1/users/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { code: string }).code).toBe("payload_too_large");
    const chunked = await fetch(`${running.base}/svc-api/v1/users/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([big]).stream(),
    });
    expect(chunked.status).toBe(413);
    const huge = await fetch(`${running.base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(10_000),
    });
    expect(huge.status).toBe(413);
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("Node's fetch uploading 20 MiB reads the 413 every time, not EPIPE; so does curl with Expect: 100-continue", async () => {
    const running = await start(emptyFolderWithBinary());
    const script = `
      const results = [];
      for (let i = 0; i < 10; i++) {
        try {
          const r = await fetch(${JSON.stringify(`${running.base}/svc-api/v1/users/create`)}, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(20 * 1024 * 1024) });
          results.push(r.status + " " + (await r.json()).code);
        } catch (e) { results.push("error " + (e.cause?.code ?? e.message)); }
      }
      console.log(JSON.stringify(results));`;
    const node = Bun.spawn(["node", "--input-type=module", "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(await node.exited).toBe(0);
    expect(JSON.parse(await new Response(node.stdout).text())).toEqual(Array(10).fill("413 payload_too_large"));

    const body = join(scratchFolder("upload-"), "20MiB.json");
    await Bun.write(body, "x".repeat(20 * 1024 * 1024));
    const curl = Bun.spawnSync([
      "curl",
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      "content-type: application/json",
      "-H",
      "expect: 100-continue",
      "--data-binary",
      `@${body}`,
      `${running.base}/svc-api/v1/users/create`,
    ]);
    expect(curl.stdout.toString()).toBe("413");
    expect(await stop(running)).toBe(0);
  }, 60_000);

  test("compiled with svc's flags, an error keeps its class's name and its stack names svc's functions and files", async () => {
    // A small program of svc's own modules, built as the binary is (src/build/flags.ts): a logged error's
    // `type` is what an operator greps for, and a minified name ("Ke") says nothing.
    const dir = scratchFolder("names-");
    const src = join(import.meta.dir, "..", "..", "src");
    await Bun.write(
      join(dir, "entry.ts"),
      `import { AppError } from ${JSON.stringify(join(src, "errors", "index.ts"))};
import { safeError } from ${JSON.stringify(join(src, "errors", "safe-errors.ts"))};
function failingStep() { throw new AppError("database_unavailable"); }
try { failingStep(); } catch (error) { console.log(JSON.stringify(safeError(error))); }
`,
    );
    const { COMPILE_FLAGS } = await import("../../src/build/flags.ts");
    const build = Bun.spawnSync(
      [process.execPath, "build", ...COMPILE_FLAGS, join(dir, "entry.ts"), "--outfile", join(dir, "names")],
      {
        cwd: dir,
        stderr: "pipe",
      },
    );
    expect(build.stderr.toString()).toBe("");
    const logged = JSON.parse(Bun.spawnSync([join(dir, "names")]).stdout.toString());
    expect(logged.type).toBe("AppError");
    expect(logged.stack).toStartWith("AppError: ");
    expect(logged.stack).toMatch(/at failingStep \(.*entry\.ts:3:/);
  }, 60_000);

  test("refuses to start on a bad setting, with one line naming the variable", async () => {
    const dir = emptyFolderWithBinary();
    const cases: Array<[Record<string, string>, string]> = [
      [{ SVC_PORT: "eighty" }, "SVC_PORT"],
      [{ SVC_ENV: "production", SVC_JWT_SECRET: "" }, "SVC_JWT_SECRET"],
      [{ SVC_GRAPHQL_AUTH: "maybe" }, "SVC_GRAPHQL_AUTH"],
      [{ SVC_OIDC_PROVIDERS: "corp" }, "SVC_OIDC_CORP_ISSUER"],
      [
        {
          SVC_OIDC_PROVIDERS: "corp",
          SVC_OIDC_CORP_ISSUER: "http://sso.example.com",
          SVC_OIDC_CORP_CLIENT_ID: "svc",
          SVC_OIDC_CORP_CLIENT_SECRET: "s",
          SVC_PUBLIC_URL: "https://svc.example.com",
        },
        "SVC_OIDC_CORP_ISSUER",
      ],
      [
        {
          SVC_OIDC_PROVIDERS: "corp",
          SVC_OIDC_CORP_ISSUER: "https://sso.example.com",
          SVC_OIDC_CORP_CLIENT_ID: "svc",
          SVC_OIDC_CORP_CLIENT_SECRET: "s",
        },
        "SVC_PUBLIC_URL",
      ],
    ];
    for (const [env, variable] of cases) {
      const proc = runProcessSync([...svcIn(dir)], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", ...env },
      });
      expect(proc.code).toBe(2);
      const lines = proc.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`svc: ${variable}: `);
    }
    expect(existsSync(join(dir, "data"))).toBe(false);
  }, 30_000);

  test("GraphQL syntax errors and limit refusals are the client's, not the server's: their codes, and no error log line", async () => {
    const running = await start(emptyFolderWithBinary(), { SVC_GRAPHQL_AUTH: "off" });
    const ask = async (query: string, accept: string) => {
      const response = await fetch(`${running.base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", accept },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: await response.json() };
    };
    const syntax = await ask("{ categories { id ", "application/graphql-response+json");
    expect(syntax).toEqual({
      status: 400,
      body: {
        errors: [
          {
            message: "Syntax Error: Expected Name, found <EOF>.",
            locations: [{ line: 1, column: 19 }],
            extensions: { code: "GRAPHQL_PARSE_FAILED" },
          },
        ],
      },
    });
    expect((await ask("{ categories { id ", "application/json")).body.errors[0].extensions.code).toBe(
      "GRAPHQL_PARSE_FAILED",
    );
    const tokens = await ask(`{ categories { ${"id ".repeat(1000)} } }`, "application/graphql-response+json");
    expect({ status: tokens.status, code: tokens.body.errors[0].extensions.code }).toEqual({
      status: 400,
      code: "QUERY_LIMIT_EXCEEDED",
    });
    const aliases = await ask(
      `{ ${Array.from({ length: 11 }, (_, i) => `a${i}: categories { id }`).join(" ")} }`,
      "application/graphql-response+json",
    );
    expect({ status: aliases.status, code: aliases.body.errors[0].extensions.code }).toEqual({
      status: 400,
      code: "QUERY_LIMIT_EXCEEDED",
    });
    expect(await stop(running)).toBe(0);
    expect(
      running
        .output()
        .split("\n")
        .filter((line) => line.includes('"level":"error"')),
    ).toEqual([]);
  }, 30_000);

  test("in production, the playground is 404 and introspection is refused", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir, { SVC_ENV: "production" });
    expect((await fetch(`${running.base}/graphql/playground`)).status).toBe(404);
    await json(running.base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    const token = (
      await json(running.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" })
    ).body.token;
    const introspection = await json(
      running.base,
      "POST",
      "/graphql",
      { query: "{ __schema { types { name } } }" },
      token,
    );
    expect(introspection.body.data).toBeUndefined();
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("svc copy rejects bad usage with exit code 2", () => {
    const dir = emptyFolderWithBinary();
    const run = (...args: string[]) =>
      runProcessSync([...svcIn(dir), ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "" } });
    expect(run("copy", "--from", "sqlite:a.db").code).toBe(2);
    expect(run("copy", "--from", "sqlite:a.db", "--to", "sqlite:a.db").code).toBe(2);
    const badUrl = run("copy", "--from", "mysql://u:pw@h/db", "--to", "sqlite:b.db");
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain("--from: ");
    expect(badUrl.stderr).not.toContain("pw");
    expect(run("frobnicate").code).toBe(2);
    expect(run("--help").code).toBe(0);
  });
});
