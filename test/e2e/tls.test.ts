// The compiled binary serving HTTPS (SVC_TLS_CERT, SVC_TLS_KEY), through test/e2e/support/tls.ts: the
// whole API to Node's https and Bun's fetch, HSTS, certificates swapped at SIGHUP, healthcheck. Refused
// files are in tls-refusals.test.ts, the operations listener (SVC_OPS_ADDRESS) in tls-operations.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../ports.ts";
import {
  cleanUpTls,
  clientLines,
  emptyFolderWithBinary,
  fetchTls,
  install,
  json,
  pki,
  prepareTls,
  ROTATION_CLIENT,
  servedFingerprint,
  start,
  started,
  stop,
} from "./support/tls.ts";
import { runProcessSync } from "../support/cli.ts";
import { svcIn } from "./support/tls.ts";
import { waitUntil } from "../support/wait.ts";
import { failure } from "../support/failure.ts";

beforeAll(prepareTls, 120_000);
afterAll(cleanUpTls);

describe("HTTPS", () => {
  test("serves the whole API over TLS with a certificate chain, to Node's https and Bun's fetch; HSTS in production", async () => {
    const dir = emptyFolderWithBinary();
    const running = await start(dir, { SVC_ENV: "production", SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.a.key });
    expect(running.base).toStartWith("https://127.0.0.1:");
    const listening = JSON.parse(await running.line('"svc listening"'));
    expect(listening).toMatchObject({ tls_fingerprint: pki.a.fingerprint });
    expect(Date.parse(listening.tls_expires)).toBeGreaterThan(Date.now());
    const base = running.base.replace("127.0.0.1", "localhost");

    const health = await fetchTls(`${base}/svc/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get("strict-transport-security")).toBe("max-age=31536000");
    const created = await json(base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("strict-transport-security")).toBe("max-age=31536000");
    const { body } = await json(base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" });
    const graphql = await json(base, "POST", "/graphql", { query: "{ categories { id } }" }, body.token);
    expect(graphql.body).toEqual({ data: { categories: [] } });
    const missing = await json(base, "GET", "/no/such/path");
    expect({ status: missing.status, hsts: missing.headers.get("strict-transport-security") }).toEqual({
      status: 404,
      hsts: "max-age=31536000",
    });

    // Node's https, trusting only the root: the intermediate must come from svc.
    const script = `
      const request = require("node:https").get(process.env.URL, { ca: process.env.CA }, (response) => {
        const fingerprint = response.socket.getPeerX509Certificate().fingerprint256;
        let body = ""; response.on("data", (d) => (body += d));
        response.on("end", () => console.log(JSON.stringify({ status: response.statusCode, body: JSON.parse(body), fingerprint })));
      });
      request.on("error", (e) => { console.error(e.message); process.exit(1); });`;
    const node = Bun.spawn(["node", "-e", script], {
      env: { ...process.env, CA: pki.ca, URL: `${base}/svc/health/ready` },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect({ code: await node.exited, stderr: await new Response(node.stderr).text() }).toEqual({
      code: 0,
      stderr: "",
    });
    expect(JSON.parse(await new Response(node.stdout).text())).toEqual({
      status: 200,
      body: { status: "ok", checks: { database: "ok", storage: "ok" } },
      fingerprint: pki.a.fingerprint,
    });

    // Plain HTTP on the HTTPS port gets no answer.
    expect(await failure(fetch(`${running.base.replace("https:", "http:")}/svc/health`))).toBeInstanceOf(Error);
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("outside production: HTTPS without HSTS", async () => {
    const running = await start(emptyFolderWithBinary(), { SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.a.key });
    const health = await fetchTls(`${running.base.replace("127.0.0.1", "localhost")}/svc/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get("strict-transport-security")).toBeNull();
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("SIGHUP swaps the certificate: an open event stream keeps its connection, new connections get the new one", async () => {
    const dir = emptyFolderWithBinary();
    const files = { cert: join(dir, "cert.pem"), key: join(dir, "key.pem") };
    await install(pki.a, files);
    const running = await start(dir, { SVC_TLS_CERT: files.cert, SVC_TLS_KEY: files.key });
    const base = running.base.replace("127.0.0.1", "localhost");
    const user = { username: "rita", email: "rita@example.com", password: "correct horse" };
    await json(base, "POST", "/svc-api/v1/users/create", user);
    const { body } = await json(base, "POST", "/svc-api/v1/auth/login", {
      username: user.username,
      password: user.password,
    });

    // Node: one keep-alive connection making plain requests, one holding a subscription's event stream.
    const client = Bun.spawn(["node", "--input-type=module", "-e", ROTATION_CLIENT], {
      env: { ...process.env, CA: pki.ca, URL: base, TOKEN: body.token },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    started.add(client);
    const said = clientLines(client);
    const before = await said("before");
    expect(before).toMatchObject({ status: 200, socket: 1, fingerprint: pki.a.fingerprint });
    expect(await said("stream")).toMatchObject({ status: 200, fingerprint: pki.a.fingerprint });
    // The subscription is registered (as the metrics count it) before anything changes.
    await waitUntil(
      async () =>
        /svc_subscriptions_open\{transport="sse".*\} 1\n/.test(await (await fetchTls(`${base}/svc/metrics`)).text()),
      { what: "the subscription counted" },
    );

    const expiry = async () =>
      Number(
        /^svc_tls_certificate_expiry_timestamp_seconds\{service="svc"\} (\S+)$/m.exec(
          await (await fetchTls(`${base}/svc/metrics`)).text(),
        )?.[1],
      );
    expect(await expiry()).toBe(pki.a.expires);

    await install(pki.b, files);
    running.proc.kill("SIGHUP");
    const reloaded = JSON.parse(await running.line('"TLS certificate reloaded"'));
    expect(reloaded).toMatchObject({ level: "info", tls_fingerprint: pki.b.fingerprint });
    expect(await expiry()).toBe(pki.b.expires);
    client.stdin.write("rotated\n");
    client.stdin.flush();

    // A new connection, from Node and from Bun, sees the new certificate.
    expect(await said("fresh")).toEqual({ fingerprint: pki.b.fingerprint });
    expect(await servedFingerprint(base)).toBe(pki.b.fingerprint);
    expect((await fetchTls(`${base}/svc/health/live`)).status).toBe(200);
    // The idle keep-alive connection: Bun's graceful stop of the old socket closes it between requests
    // (src/process/reloadable-listener.ts), so the agent's next request goes out on a new one, with the new certificate.
    // When this fails on socket 1, Bun has learnt to keep it: docs/operations.md should say so.
    expect(await said("after")).toEqual({ status: 200, socket: 2, fingerprint: pki.b.fingerprint });

    // The event stream opened before the swap is still served, on its connection and certificate.
    const created = await json(
      base,
      "POST",
      "/graphql",
      { query: 'mutation { createCategory(input: { name: "Rotated" }) { id } }' },
      body.token,
    );
    expect(created.status).toBe(200);
    expect(await said("event")).toEqual({
      data: { categoryEvents: { kind: "CREATED", category: { name: "Rotated" } } },
      fingerprint: pki.a.fingerprint,
      socket: "stream",
    });
    expect(await client.exited).toBe(0);
    expect(running.output()).not.toContain('"level":"error"');
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("a bad file at SIGHUP is one error line, and the certificate in use stays; a good pair then loads", async () => {
    const dir = emptyFolderWithBinary();
    const files = { cert: join(dir, "cert.pem"), key: join(dir, "key.pem") };
    await install(pki.a, files);
    const running = await start(dir, { SVC_TLS_CERT: files.cert, SVC_TLS_KEY: files.key });
    const errors = () =>
      running
        .output()
        .split("\n")
        .filter((l) => l.includes('"level":"error"'));

    const refusals: Array<[() => Promise<unknown>, string]> = [
      [
        () => Bun.write(files.cert, "not a certificate\n"),
        `SVC_TLS_CERT: ${files.cert}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)`,
      ],
      // The new certificate written, its key not yet: what a SIGHUP between the two writes would find.
      [
        () => Bun.write(files.cert, Bun.file(pki.b.chain)),
        `SVC_TLS_KEY: ${files.key}: not the private key of the certificate in SVC_TLS_CERT (${files.cert})`,
      ],
      [async () => rmSync(files.key), `SVC_TLS_KEY: ${files.key}: no such file`],
      // A FIFO where the key was: refused without waiting for a writer, and svc goes on answering.
      [
        async () => expect(Bun.spawnSync(["mkfifo", files.key]).exitCode).toBe(0),
        `SVC_TLS_KEY: ${files.key}: not a regular file (a FIFO)`,
      ],
    ];
    for (const [i, [breakIt, problem]] of refusals.entries()) {
      await breakIt();
      running.proc.kill("SIGHUP");
      const line = JSON.parse(await running.line(problem));
      expect(line).toMatchObject({
        level: "error",
        msg: `TLS certificate not reloaded, the one in use stays: ${problem}`,
      });
      expect(errors()).toHaveLength(i + 1);
      expect(await servedFingerprint(running.base)).toBe(pki.a.fingerprint);
      expect((await fetchTls(`${running.base.replace("127.0.0.1", "localhost")}/svc/health/live`)).status).toBe(200);
    }

    rmSync(files.key);
    await install(pki.b, files);
    running.proc.kill("SIGHUP");
    await running.line('"TLS certificate reloaded"');
    expect(await servedFingerprint(running.base)).toBe(pki.b.fingerprint);
    expect(errors()).toHaveLength(refusals.length);
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("svc healthcheck asks over HTTPS", async () => {
    const dir = emptyFolderWithBinary();
    const env = { SVC_PORT: String(freePort()), SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.a.key };
    const running = await start(dir, env);
    const check = runProcessSync([...svcIn(dir), "healthcheck"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_HOST: "127.0.0.1", ...env },
    });
    expect({ code: check.code, stderr: check.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await stop(running)).toBe(0);
  }, 30_000);
});
