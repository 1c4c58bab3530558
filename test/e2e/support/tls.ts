// The compiled binary serving HTTPS, as the tls*.test.ts files drive it: certificates made here by openssl
// (a root, an intermediate, leaves for localhost), svc started and stopped through the test kit's spawner,
// clients in Node (node:https, node:tls, as installed) and Bun (fetch with `tls: { ca }`).
import { expect } from "bun:test";
import { X509Certificate } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { spawnProcess } from "../../support/cli.ts";
import { compiledBinary } from "./binary.ts";

/** The command that runs the copy of the binary in `dir`. */
export const svcIn = (dir: string): string[] => [join(dir, "svc")];

export const SECRET = "tls-test-secret-of-at-least-32-bytes-long";
export const METRICS_TOKEN = "metrics-token-of-at-least-24-characters";
/** An address of this machine other than loopback, to be a stranger from; undefined when it has none. */
export const OUTSIDE = Object.values(networkInterfaces())
  .flat()
  .find((each) => each && each.family === "IPv4" && !each.internal)?.address;

let workdir: string;
let binary: string;
/** The test PKI, made in beforeAll (prepareTls). */
export let pki: Pki;

/** For each file's beforeAll: the binary (built by the run's first caller) and a PKI of the file's own. */
export async function prepareTls(): Promise<void> {
  workdir = mkdtempSync(join(tmpdir(), "svc-tls-"));
  binary = await compiledBinary();
  pki = await makePki(join(workdir, "pki"));
}

/** Every process started (svc, the rotation client), so that one a failed test left running is stopped with the rest. */
export const started = new Set<Subprocess>();

/** For each file's afterAll. */
export function cleanUpTls(): void {
  for (const proc of started) proc.kill("SIGKILL");
  started.clear();
  rmSync(workdir, { recursive: true, force: true });
}

export interface Leaf {
  /** The leaf and the intermediate, as a CA's fullchain.pem has them. */
  chain: string;
  key: string;
  fingerprint: string;
  /** notAfter, in Unix seconds. */
  expires: number;
}

export interface Pki {
  /** The root, which clients trust. */
  ca: string;
  a: Leaf;
  b: Leaf;
  dir: string;
}

export function openssl(args: string[], cwd: string): void {
  const run = Bun.spawnSync(["openssl", ...args], { cwd, stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${run.stderr.toString()}`);
}

/** A root, an intermediate it signed, and two leaves (a and b) the intermediate signed for localhost. */
export async function makePki(dir: string): Promise<Pki> {
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
export function emptyFolderWithBinary(): string {
  const dir = mkdtempSync(join(workdir, "run-"));
  copyFileSync(binary, join(dir, "svc"));
  chmodSync(join(dir, "svc"), 0o755);
  return dir;
}

export interface Running {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  /** The public listener's URL, from the "svc listening" line. */
  base: string;
  ops: string | undefined;
  output: () => string;
  /** Resolves with the output's first line holding `text` (at once if there is one). */
  line: (text: string) => Promise<string>;
}

export async function start(dir: string, env: Record<string, string> = {}): Promise<Running> {
  const proc = spawnProcess(svcIn(dir), {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_JWT_SECRET: SECRET, ...env },
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

export async function stop(running: Running): Promise<number> {
  running.proc.kill("SIGTERM");
  return running.proc.exited;
}

/** The certificate a new TLS connection to `url` is served, by Node's tls. */
export async function servedFingerprint(url: string): Promise<string> {
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
export function fetchTls(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, tls: { ca: pki.ca } });
}

export async function json(base: string, method: string, path: string, body?: unknown, token?: string) {
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
export async function install(leaf: Leaf, files: { cert: string; key: string }): Promise<void> {
  await Bun.write(files.cert, await Bun.file(leaf.chain).text());
  await Bun.write(files.key, await Bun.file(leaf.key).text());
}

/** Reads the rotation client's JSON lines: `said(kind)` resolves with the next line of that kind. */
export function clientLines(client: Subprocess<"pipe", "pipe", "pipe">) {
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

export function withoutKind({ kind: _, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return rest;
}

/**
 * In Node, as installed: a keep-alive agent with one connection (its requests say which connection, by
 * number, and which certificate it was served), and a GraphQL subscription's event stream on its own
 * connection. After "rotated" on stdin: a new TLS connection's certificate, the agent's next request,
 * then the stream's next event; it exits once that has come.
 */
export const ROTATION_CLIENT = `
import https from "node:https";
import tls from "node:tls";
export const { CA: ca, URL: base, TOKEN: token } = process.env;
export const url = new URL(base);
export const say = (kind, fields) => process.stdout.write(JSON.stringify({ kind, ...fields }) + "\\n");
export const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
let sockets = 0;
export const get = (path) => new Promise((resolve, reject) => {
  https.get(new URL(path, base), { agent }, (response) => {
    const socket = response.socket;
    socket.number ??= ++sockets;
    const fingerprint = socket.getPeerX509Certificate().fingerprint256;
    response.resume();
    response.on("end", () => resolve({ status: response.statusCode, socket: socket.number, fingerprint }));
  }).on("error", reject);
});
say("before", await get("/svc/health/live"));
export const stream = https.request(new URL("/graphql", base), {
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
