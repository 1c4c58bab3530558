// The compiled binary serving HTTPS (SVC_TLS_CERT, SVC_TLS_KEY) and a second, operations listener
// (SVC_OPS_ADDRESS): certificates made here by openssl (a root, an intermediate, leaves for localhost),
// clients in Node (node:https, node:tls, as installed) and Bun (fetch with `tls: { ca }`).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../ports.ts";
import { compiledBinary } from "./support/binary.ts";

const SECRET = "tls-test-secret-of-at-least-32-bytes-long";
const METRICS_TOKEN = "metrics-token-of-at-least-24-characters";
/** An address of this machine other than loopback, to be a stranger from; undefined when it has none. */
const OUTSIDE = Object.values(networkInterfaces())
  .flat()
  .find((each) => each && each.family === "IPv4" && !each.internal)?.address;

let workdir: string;
let binary: string;
let pki: Pki;

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), "svc-tls-"));
  binary = await compiledBinary();
  pki = await makePki(join(workdir, "pki"));
}, 120_000);

/** Every process started (svc, the rotation client), so that one a failed test left running is stopped with the rest. */
const started = new Set<Subprocess>();

afterAll(() => {
  for (const proc of started) proc.kill("SIGKILL");
  rmSync(workdir, { recursive: true, force: true });
});

interface Leaf {
  /** The leaf and the intermediate, as a CA's fullchain.pem has them. */
  chain: string;
  key: string;
  fingerprint: string;
  /** notAfter, in Unix seconds. */
  expires: number;
}

interface Pki {
  /** The root, which clients trust. */
  ca: string;
  a: Leaf;
  b: Leaf;
  dir: string;
}

function openssl(args: string[], cwd: string): void {
  const run = Bun.spawnSync(["openssl", ...args], { cwd, stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${run.stderr.toString()}`);
}

/** A root, an intermediate it signed, and two leaves (a and b) the intermediate signed for localhost. */
async function makePki(dir: string): Promise<Pki> {
  mkdirSync(dir, { recursive: true });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  await Bun.write(join(dir, "ca.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
  const names = ["DNS:localhost", "IP:127.0.0.1", ...(OUTSIDE ? [`IP:${OUTSIDE}`] : [])].join(",");
  await Bun.write(join(dir, "leaf.ext"), `subjectAltName=${names}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "root.key",
      "-out",
      "root.pem",
      "-days",
      "2",
      "-subj",
      "/CN=svc test root",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign",
    ],
    dir,
  );
  openssl(["req", "-new", ...ec, "-keyout", "int.key", "-out", "int.csr", "-subj", "/CN=svc test intermediate"], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "int.csr",
      "-CA",
      "root.pem",
      "-CAkey",
      "root.key",
      "-CAcreateserial",
      "-out",
      "int.pem",
      "-days",
      "2",
      "-extfile",
      "ca.ext",
    ],
    dir,
  );
  const leaf = async (name: string, days: number): Promise<Leaf> => {
    openssl(["req", "-new", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", "/CN=localhost"], dir);
    openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "int.pem",
        "-CAkey",
        "int.key",
        "-CAcreateserial",
        "-out",
        `${name}.pem`,
        "-days",
        String(days),
        "-extfile",
        "leaf.ext",
      ],
      dir,
    );
    const certificate = await Bun.file(join(dir, `${name}.pem`)).text();
    const chain = join(dir, `${name}-fullchain.pem`);
    await Bun.write(chain, certificate + (await Bun.file(join(dir, "int.pem")).text()));
    const x509 = new X509Certificate(certificate);
    return {
      chain,
      key: join(dir, `${name}.key`),
      fingerprint: x509.fingerprint256,
      expires: Date.parse(x509.validTo) / 1000,
    };
  };
  // Different lifetimes, so that the expiry metric tells them apart.
  return { ca: await Bun.file(join(dir, "root.pem")).text(), a: await leaf("a", 2), b: await leaf("b", 1), dir };
}

/** An empty folder holding nothing but a copy of the binary. */
function emptyFolderWithBinary(): string {
  const dir = mkdtempSync(join(workdir, "run-"));
  copyFileSync(binary, join(dir, "svc"));
  chmodSync(join(dir, "svc"), 0o755);
  return dir;
}

interface Running {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** The public listener's URL, from the "svc listening" line. */
  base: string;
  ops: string | undefined;
  output: () => string;
  /** Resolves with the output's first line holding `text` (at once if there is one). */
  line: (text: string) => Promise<string>;
}

async function start(dir: string, env: Record<string, string> = {}): Promise<Running> {
  const proc = Bun.spawn([join(dir, "svc")], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_JWT_SECRET: SECRET, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  started.add(proc);
  let text = "";
  const waiting: Array<{ text: string; resolve: (line: string) => void }> = [];
  const find = (wanted: string) => text.split("\n").find((l) => l.includes(wanted) && l.endsWith("}"));
  const ended = (async () => {
    const decoder = new TextDecoder();
    const reader = proc.stdout.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += decoder.decode(read.value);
      for (const each of [...waiting]) {
        const found = find(each.text);
        if (!found) continue;
        waiting.splice(waiting.indexOf(each), 1);
        each.resolve(found);
      }
    }
  })();
  // Read once, when svc has ended: what it said on stderr, for a wait that came to nothing.
  const stderr = ended.then(() => new Response(proc.stderr).text());
  const line = (wanted: string) =>
    new Promise<string>((resolve, reject) => {
      const found = find(wanted);
      if (found) return resolve(found);
      waiting.push({ text: wanted, resolve });
      void stderr.then((said) => reject(new Error(`svc ended without "${wanted}": ${text}${said}`)));
    });
  const listening = JSON.parse(await line('"svc listening"'));
  return { proc, base: listening.address, ops: listening.ops_address, output: () => text, line };
}

async function stop(running: Running): Promise<number> {
  running.proc.kill("SIGTERM");
  return running.proc.exited;
}

/** The certificate a new TLS connection to `url` is served, by Node's tls. */
async function servedFingerprint(url: string): Promise<string> {
  const { port } = new URL(url);
  const script = `
    const socket = require("node:tls").connect({ host: "127.0.0.1", port: ${port}, servername: "localhost", ca: process.env.CA }, () => {
      console.log(socket.getPeerX509Certificate().fingerprint256); socket.end();
    });
    socket.on("error", (e) => { console.error(e.message); process.exit(1); });`;
  const node = Bun.spawn(["node", "-e", script], {
    env: { ...process.env, CA: pki.ca },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await node.exited).toBe(0);
  return (await new Response(node.stdout).text()).trim();
}

/** Bun's fetch, trusting the test root. */
function fetchTls(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, tls: { ca: pki.ca } });
}

async function json(base: string, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetchTls(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** Writes a certificate and key over the files svc was started with. */
async function install(leaf: Leaf, files: { cert: string; key: string }): Promise<void> {
  await Bun.write(files.cert, await Bun.file(leaf.chain).text());
  await Bun.write(files.key, await Bun.file(leaf.key).text());
}

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
    await expect(fetch(`${running.base.replace("https:", "http:")}/svc/health`)).rejects.toThrow();
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
    for (let i = 0; i < 100; i++) {
      const metrics = await (await fetchTls(`${base}/svc/metrics`)).text();
      if (/svc_subscriptions_open\{transport="sse".*\} 1\n/.test(metrics)) break;
      await Bun.sleep(20);
    }

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
    // (src/http/listening.ts), so the agent's next request goes out on a new one, with the new certificate.
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
    const check = Bun.spawnSync([join(dir, "svc"), "healthcheck"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_HOST: "127.0.0.1", ...env },
    });
    expect({ code: check.exitCode, stderr: check.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(await stop(running)).toBe(0);
  }, 30_000);
});

describe("refuses to start on a TLS file it cannot use: one line naming the variable, exit 2, nothing touched", () => {
  const refusal = (env: () => Record<string, string>, line: () => string) => async () => {
    const dir = emptyFolderWithBinary();
    const proc = Bun.spawnSync([join(dir, "svc")], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_JWT_SECRET: SECRET, ...env() },
      // A refusal is immediate; one that hangs (a FIFO read whole) is a failure, not a stuck suite.
      timeout: 20_000,
      killSignal: "SIGKILL",
    });
    expect({ code: proc.exitCode, stderr: proc.stderr.toString(), stdout: proc.stdout.toString() }).toEqual({
      code: 2,
      stderr: `${line()}\n`,
      stdout: "",
    });
    expect(existsSync(join(dir, "data"))).toBe(false);
  };

  test(
    "a certificate file that holds no certificate",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.key, SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${pki.a.key}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)`,
    ),
  );
  test("a damaged certificate", async () => {
    const damaged = join(pki.dir, "damaged.pem");
    const pem = await Bun.file(pki.a.chain).text();
    await Bun.write(
      damaged,
      pem.replace(/(-----BEGIN CERTIFICATE-----\n)(.{40})/, "$1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
    );
    await refusal(
      () => ({ SVC_TLS_CERT: damaged, SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${damaged}: certificate 1 of 2 is not valid PEM`,
    )();
  });
  test(
    "a missing certificate file",
    refusal(
      () => ({ SVC_TLS_CERT: join(pki.dir, "nowhere.pem"), SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${join(pki.dir, "nowhere.pem")}: no such file`,
    ),
  );
  test(
    "a missing key file",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: join(pki.dir, "nowhere.key") }),
      () => `svc: SVC_TLS_KEY: ${join(pki.dir, "nowhere.key")}: no such file`,
    ),
  );
  test(
    "a folder for a file",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.dir }),
      () => `svc: SVC_TLS_KEY: ${pki.dir}: a folder, not a file`,
    ),
  );
  test("a FIFO for the key: refused without opening it for a read that would wait for a writer", async () => {
    const fifo = join(pki.dir, "key.fifo");
    if (!existsSync(fifo)) expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    await refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: fifo }),
      () => `svc: SVC_TLS_KEY: ${fifo}: not a regular file (a FIFO)`,
    )();
  });
  test(
    "a device for the certificate, which would never end",
    refusal(
      () => ({ SVC_TLS_CERT: "/dev/zero", SVC_TLS_KEY: pki.a.key }),
      () => "svc: SVC_TLS_CERT: /dev/zero: not a regular file (a character device)",
    ),
  );
  test("a file far larger than any certificate chain", async () => {
    const large = join(pki.dir, "large.pem");
    await Bun.write(large, `${await Bun.file(pki.a.chain).text()}${"#".repeat(2 * 1024 * 1024)}`);
    await refusal(
      () => ({ SVC_TLS_CERT: large, SVC_TLS_KEY: pki.a.key }),
      () => `svc: SVC_TLS_CERT: ${large}: 2.0 MiB, larger than the 1 MiB a certificate chain or key could need`,
    )();
  });
  test(
    "a key file that holds no key",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.a.chain }),
      () => `svc: SVC_TLS_KEY: ${pki.a.chain}: no PEM private key in it`,
    ),
  );
  test("an encrypted key", async () => {
    const encrypted = join(pki.dir, "encrypted.key");
    openssl(["pkey", "-in", pki.a.key, "-aes256", "-passout", "pass:secret", "-out", encrypted], pki.dir);
    await refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: encrypted }),
      () =>
        `svc: SVC_TLS_KEY: ${encrypted}: the key is encrypted; svc needs it unencrypted (readable by svc's user alone)`,
    )();
  });
  test(
    "another certificate's key",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: pki.b.key }),
      () => `svc: SVC_TLS_KEY: ${pki.b.key}: not the private key of the certificate in SVC_TLS_CERT (${pki.a.chain})`,
    ),
  );
  test.skipIf(process.getuid?.() === 0)("a key svc's user cannot read", async () => {
    const unreadable = join(pki.dir, "unreadable.key");
    copyFileSync(pki.a.key, unreadable);
    chmodSync(unreadable, 0o000);
    await refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain, SVC_TLS_KEY: unreadable }),
      () => `svc: SVC_TLS_KEY: ${unreadable}: permission denied: svc's user cannot read it`,
    )();
  });
  test(
    "a certificate without its key",
    refusal(
      () => ({ SVC_TLS_CERT: pki.a.chain }),
      () => 'svc: SVC_TLS_KEY: a PEM key file, required when SVC_TLS_CERT is set (both or neither) (got "")',
    ),
  );
  test(
    "a key without its certificate",
    refusal(
      () => ({ SVC_TLS_KEY: pki.a.key }),
      () => 'svc: SVC_TLS_CERT: a PEM certificate file, required when SVC_TLS_KEY is set (both or neither) (got "")',
    ),
  );
  test(
    "an operations address without a port",
    refusal(
      () => ({ SVC_OPS_ADDRESS: "127.0.0.1" }),
      () => 'svc: SVC_OPS_ADDRESS: host:port, such as 127.0.0.1:9090 or [::1]:9090 (got "127.0.0.1")',
    ),
  );
});

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

    const check = Bun.spawnSync([join(dir, "svc"), "healthcheck"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SVC_PORT: "1", SVC_JWT_SECRET: SECRET, ...env },
    });
    expect({ code: check.exitCode, stderr: check.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(await stop(running)).toBe(0);
  }, 30_000);

  test("a taken operations port stops start-up with one line naming SVC_OPS_ADDRESS", async () => {
    const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const dir = emptyFolderWithBinary();
      const proc = Bun.spawnSync([join(dir, "svc")], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          SVC_PORT: "0",
          SVC_HOST: "127.0.0.1",
          SVC_OPS_ADDRESS: `127.0.0.1:${holder.port}`,
        },
      });
      expect({ code: proc.exitCode, stderr: proc.stderr.toString() }).toEqual({
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
      const proc = Bun.spawnSync([join(dir, "svc")], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          SVC_PORT: String(holder.port),
          SVC_HOST: "127.0.0.1",
          SVC_TLS_CERT: pki.a.chain,
          SVC_TLS_KEY: pki.a.key,
        },
      });
      expect({ code: proc.exitCode, stderr: proc.stderr.toString() }).toEqual({
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

/** Reads the rotation client's JSON lines: `said(kind)` resolves with the next line of that kind. */
function clientLines(client: Subprocess<"pipe", "pipe", "pipe">) {
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<{ kind: string; resolve: (line: Record<string, unknown>) => void }> = [];
  const ended = (async () => {
    let buffer = "";
    const decoder = new TextDecoder();
    const reader = client.stdout.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffer += decoder.decode(read.value);
      for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, end)));
        buffer = buffer.slice(end + 1);
      }
      for (const each of [...waiting]) {
        const index = lines.findIndex((line) => line.kind === each.kind);
        if (index !== -1) {
          waiting.splice(waiting.indexOf(each), 1);
          each.resolve(withoutKind(lines.splice(index, 1)[0]!));
        }
      }
    }
  })();
  const stderr = ended.then(() => new Response(client.stderr).text());
  return (kind: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const index = lines.findIndex((line) => line.kind === kind);
      if (index !== -1) return resolve(withoutKind(lines.splice(index, 1)[0]!));
      waiting.push({ kind, resolve });
      void stderr.then((said) => reject(new Error(`the client ended without "${kind}": ${said}`)));
    });
}

function withoutKind({ kind: _, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return rest;
}

/**
 * In Node, as installed: a keep-alive agent with one connection (its requests say which connection, by
 * number, and which certificate it was served), and a GraphQL subscription's event stream on its own
 * connection. After "rotated" on stdin: a new TLS connection's certificate, the agent's next request,
 * then the stream's next event; it exits once that has come.
 */
const ROTATION_CLIENT = `
import https from "node:https";
import tls from "node:tls";
const { CA: ca, URL: base, TOKEN: token } = process.env;
const url = new URL(base);
const say = (kind, fields) => process.stdout.write(JSON.stringify({ kind, ...fields }) + "\\n");
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
let sockets = 0;
const get = (path) => new Promise((resolve, reject) => {
  https.get(new URL(path, base), { agent }, (response) => {
    const socket = response.socket;
    socket.number ??= ++sockets;
    const fingerprint = socket.getPeerX509Certificate().fingerprint256;
    response.resume();
    response.on("end", () => resolve({ status: response.statusCode, socket: socket.number, fingerprint }));
  }).on("error", reject);
});
say("before", await get("/svc/health/live"));
const stream = https.request(new URL("/graphql", base), {
  method: "POST", ca, agent: false,
  headers: { authorization: "Bearer " + token, "content-type": "application/json", accept: "text/event-stream" },
}, (response) => {
  const fingerprint = response.socket.getPeerX509Certificate().fingerprint256;
  say("stream", { status: response.statusCode, fingerprint });
  let buffer = "";
  response.setEncoding("utf8");
  response.on("data", (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf("\\n\\n"); end !== -1; end = buffer.indexOf("\\n\\n")) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (event.startsWith("event: next")) {
        say("event", { data: JSON.parse(event.slice(event.indexOf("data: ") + 6)).data, fingerprint, socket: "stream" });
        stream.destroy();
        agent.destroy();
      }
    }
  });
});
stream.on("error", () => {});
stream.end(JSON.stringify({ query: "subscription { categoryEvents { kind category { name } } }" }));
process.stdin.setEncoding("utf8");
for await (const line of process.stdin) {
  if (!line.includes("rotated")) continue;
  const fresh = await new Promise((resolve, reject) => {
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), servername: "localhost", ca }, () => {
      resolve(socket.getPeerX509Certificate().fingerprint256);
      socket.end();
    });
    socket.on("error", reject);
  });
  say("fresh", { fingerprint: fresh });
  say("after", await get("/svc/health/live"));
  break;
}
`;
