// The compiled binary as the binary*.test.ts files drive it: copied alone into an empty folder, started for
// real through the test kit's spawner, stopped by a signal, and talked to over HTTP.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../../ports.ts";
import { runProcessSync, spawnProcess } from "../../support/cli.ts";
import { compiledBinary } from "./binary.ts";

export const SECRET = "binary-test-secret-of-at-least-32-bytes";

const workdir = mkdtempSync(join(tmpdir(), "svc-binary-"));
process.once("exit", () => rmSync(workdir, { recursive: true, force: true }));
let binary: string | undefined;

/** For each file's beforeAll (with a long timeout: the first caller of a run builds the binary). */
export async function prepareBinary(): Promise<void> {
  binary = await compiledBinary();
}

/** An empty folder holding nothing but a copy of the binary, `svc`. */
export function emptyFolderWithBinary(): string {
  if (!binary) throw new Error("prepareBinary() first, in beforeAll");
  const dir = mkdtempSync(join(workdir, "run-"));
  copyFileSync(binary, join(dir, "svc"));
  return dir;
}

/** The command that runs the copy of the binary in `dir`. */
export const svcIn = (dir: string): string[] => [join(dir, "svc")];

export interface Running {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  base: string;
  output: () => string;
}

/** Starts the binary in `dir` and waits for its "svc listening" line (the test stops it). */
export async function start(dir: string, env: Record<string, string> = {}): Promise<Running> {
  const proc = spawnProcess(svcIn(dir), {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_JWT_SECRET: SECRET, ...env },
  });
  let text = "";
  const decoder = new TextDecoder();
  const reader = proc.stdout.getReader();
  const deadline = Date.now() + 10_000;
  while (!text.includes('"svc listening"')) {
    if (Date.now() > deadline) throw new Error(`svc did not start: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`svc exited before listening: ${text}${await new Response(proc.stderr).text()}`);
    text += decoder.decode(value);
  }
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value);
    }
  })();
  const line = JSON.parse(text.split("\n").find((l) => l.includes('"svc listening"'))!);
  return { proc, base: line.address.replace("0.0.0.0", "127.0.0.1"), output: () => text };
}

/**
 * The binary on a free port of `host` (SVC_PUBLIC_URL its own address, with `env(base)` besides), and root,
 * an administrator made on the box with `password` (the operator vouches for root@example.com: verified).
 */
export async function startWithAdministrator(
  host: string,
  password: string,
  env: (base: string) => Record<string, string> | Promise<Record<string, string>> = () => ({}),
): Promise<{ svc: Running; base: string }> {
  await prepareBinary();
  const dir = emptyFolderWithBinary();
  const port = freePort();
  const base = `http://${host}:${port}`;
  const svc = await start(dir, { SVC_PORT: String(port), SVC_PUBLIC_URL: base, ...(await env(base)) });
  const made = runProcessSync(
    [...svcIn(dir), "admin", "create", "--username", "root", "--email", "root@example.com", "--password-stdin"],
    { cwd: dir, env: { PATH: process.env.PATH ?? "" }, stdin: `${password}\n` },
  );
  if (made.code !== 0) throw new Error(`svc admin create failed (${made.code}): ${made.stderr}`);
  return { svc, base };
}

export async function stop(running: Running): Promise<number> {
  running.proc.kill("SIGTERM");
  return running.proc.exited;
}

export async function json(base: string, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** A new folder of the test run's own, removed when the run ends. */
export const scratchFolder = (prefix: string): string => mkdtempSync(join(workdir, prefix));
