// What test/e2e/client.test.ts drives @svc/client with: the compiled binary and the built client package (each
// built once), svc started on a fresh database, and the fetches a test hands the client (one that records
// every exchange, one that keeps svc's cookie as a browser would).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Auth, SessionMode } from "../../client/src/auth.ts";
import type { Categories } from "../../client/src/categories.ts";
import type { SvcError } from "../../client/src/errors.ts";
import type { Health } from "../../client/src/health.ts";
import type { memoryStorage, SessionStorage } from "../../client/src/storage.ts";
import type { Users } from "../../client/src/users.ts";
import { createTestDatabase } from "../postgres.ts";
import { compiledBinary } from "./support/binary.ts";
import { runProcess, spawnProcess } from "../support/cli.ts";

/** What createClient takes as `fetch`: Bun's fetch type carries `preconnect`, which the client never calls. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
export const asFetch = (fetch: Fetch) => fetch as typeof globalThis.fetch;

/**
 * The package's API as the test uses it, typed from client/src's modules; the module itself is loaded from
 * client/dist (see built()). Not `typeof import(".../index.ts")`: under Bun's types client.ts does not
 * type-check (its default fetch lacks `preconnect`), and the root typecheck would inherit that.
 */
export interface Client {
  auth: Auth;
  users: Users;
  categories: Categories;
  graphql(document: string, variables?: Record<string, unknown>): Promise<unknown>;
  health(): Promise<Health>;
}
export interface ClientModule {
  createClient(options: {
    baseUrl: string;
    mode?: SessionMode;
    storage?: SessionStorage;
    storageKey?: string;
    fetch?: typeof globalThis.fetch;
  }): Client;
  SvcError: typeof SvcError;
  memoryStorage: typeof memoryStorage;
}

const ROOT = join(import.meta.dir, "..", "..");
const SECRET = "client-e2e-secret-of-at-least-32-bytes";

export interface Built {
  binary: string;
  /** client/dist/index.js: the package's entry point, as an app imports it. */
  dist: string;
  client: ClientModule;
  workdir: string;
  remove(): void;
}

/** The run's compiled binary (support/binary.ts), and `bun client/scripts/build.ts` (what npm pack runs), at once. */
export async function built(): Promise<Built> {
  const workdir = mkdtempSync(join(tmpdir(), "svc-client-e2e-"));
  const run = async (args: string[]) => {
    const {
      code,
      stdout: out,
      stderr: err,
    } = await runProcess([process.execPath, ...args], {
      cwd: ROOT,
      env: process.env,
      timeoutMs: 120_000,
    });
    if (code !== 0) throw new Error(`${args.join(" ")} failed (${code}):\n${out}${err}`);
  };
  // Both to the end, so that neither goes on writing after a failure of the other.
  const [binary, client] = await Promise.allSettled([compiledBinary(), run(["client/scripts/build.ts"])]);
  const failed = [binary, client].find((build) => build.status === "rejected");
  if (failed || binary.status !== "fulfilled") {
    rmSync(workdir, { recursive: true, force: true });
    throw failed?.reason;
  }
  // The bundle an app installs, not client/src.
  const dist = join(ROOT, "client/dist/index.js");
  const module = (await import(dist)) as ClientModule;
  return {
    binary: binary.value,
    dist,
    client: module,
    workdir,
    remove: () => rmSync(workdir, { recursive: true, force: true }),
  };
}

export type DatabaseKind = "sqlite" | "postgres";

export interface Svc {
  base: string;
  port: number;
  /** Runs one of the binary's commands (svc user disable …) on the same database, as an operator on the box. */
  cli(args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }>;
  stop(): Promise<void>;
}

/** The binary on a new database (a file in a new folder, or a new PostgreSQL database), listening on port 0. */
export async function launch(built: Built, kind: DatabaseKind, vars: Record<string, string> = {}): Promise<Svc> {
  const dir = mkdtempSync(join(built.workdir, "run-"));
  const database =
    kind === "sqlite"
      ? { url: `sqlite:${join(dir, "svc.db")}`, drop: async () => {} }
      : await createTestDatabase("client");
  const env = {
    PATH: process.env.PATH ?? "",
    SVC_PORT: "0",
    SVC_HOST: "127.0.0.1",
    SVC_JWT_SECRET: SECRET,
    SVC_ENV: "test",
    SVC_PASSWORD_COST: "minimal",
    SVC_SHUTDOWN_GRACE: "1s",
    SVC_DATABASE_URL: database.url,
    // The tests sign up from one address, more than the sign-up limit's 30 an hour in all.
    SVC_SIGNUP_CLIENT_MAX: "1000000",
    ...vars,
  };
  const proc = spawnProcess([built.binary], { cwd: dir, env });
  const text = { out: "" };
  const listening = readLines(proc, text);
  const line = (await within(listening, 15_000)) ? await listening : null;
  if (!line) {
    proc.kill();
    throw new Error(`svc did not start:\n${text.out}`);
  }
  const base = (JSON.parse(line) as { address: string }).address;
  return {
    base,
    port: Number(new URL(base).port),
    async cli(args, stdin) {
      const command = await runProcess([built.binary, ...args], {
        cwd: dir,
        env,
        ...(stdin === undefined ? {} : { stdin }),
      });
      return { code: command.code ?? -1, out: command.stdout, err: command.stderr };
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Collects stdout and stderr into `text` until svc listens (to explain a start that fails), then only drains
 * them; resolves with the "svc listening" line, or null when svc exits first.
 */
function readLines(proc: Subprocess<"pipe", "pipe", "pipe">, text: { out: string }): Promise<string | null> {
  let found: (line: string | null) => void;
  let started = false;
  const listening = new Promise<string | null>((resolve) => (found = resolve));
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      if (started) continue;
      text.out += decoder.decode(chunk.value, { stream: true });
      const line = text.out.split("\n").find((l) => l.includes('"svc listening"'));
      if (line) {
        started = true;
        found(line);
      }
    }
  };
  void Promise.all([drain(proc.stdout), drain(proc.stderr)]).then(() => found(null));
  return listening;
}

/** One exchange as the client made it: where, with which token, and what came back (svc's code on failure). */
export interface Exchange {
  method: string;
  path: string;
  authorization: string | null;
  stream: boolean;
  status: number;
  code: string | null;
}

/** A fetch that records every exchange of the fetch it wraps. */
export function recording(inner: Fetch = (input, init) => fetch(input, init)) {
  const exchanges: Exchange[] = [];
  const record: Fetch = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    const response = await inner(input, init);
    // A failure's body is small JSON: read from a copy, so the client still reads the original.
    const body = response.ok
      ? null
      : ((await response
          .clone()
          .json()
          .catch(() => null)) as { code?: string } | null);
    const errors = (body as { errors?: Array<{ extensions?: { reason?: string } }> } | null)?.errors;
    exchanges.push({
      method: init.method ?? "GET",
      path: new URL(String(input)).pathname,
      authorization: headers.get("authorization"),
      stream: headers.get("accept") === "text/event-stream",
      status: response.status,
      code: body?.code ?? errors?.[0]?.extensions?.reason ?? null,
    });
    return response;
  };
  return {
    fetch: asFetch(record),
    exchanges,
    /** The exchanges with this path (and, given, this status). */
    to: (path: string, status?: number) =>
      exchanges.filter((e) => e.path === path && (status === undefined || e.status === status)),
  };
}

/**
 * A browser's part in cookie mode, which Node's fetch does not play: it keeps the cookie svc sets (name, value,
 * path; Max-Age=0 drops it), sends it back under its path, and sends the page's Origin (svc's own by default).
 */
export function cookieJar(origin: string) {
  const jar = new Map<string, { value: string; path: string }>();
  const setCookies: string[] = [];
  const withCookies: Fetch = async (input, init = {}) => {
    const url = new URL(String(input));
    const headers = new Headers(init.headers);
    headers.set("origin", origin);
    const sent = [...jar].filter(([, cookie]) => url.pathname.startsWith(cookie.path));
    if (sent.length > 0) headers.set("cookie", sent.map(([name, cookie]) => `${name}=${cookie.value}`).join("; "));
    const response = await fetch(url, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      setCookies.push(line);
      const cookie = Bun.Cookie.parse(line);
      if (cookie.maxAge === 0 || cookie.value === "") jar.delete(cookie.name);
      else jar.set(cookie.name, { value: cookie.value, path: cookie.path ?? "/" });
    }
    return response;
  };
  return { fetch: withCookies, jar, setCookies };
}

/** Whether `promise` settled within `ms`: a bound that turns a hang into a failure, never a synchronisation. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<false>((end) => (timer = setTimeout(end, ms, false)));
  try {
    return await Promise.race([promise.then(() => true), bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `at` has passed: the scenario is an expired token, and only time expires one. */
export async function past(at: Date, margin = 50): Promise<void> {
  const left = at.getTime() - Date.now() + margin;
  if (left > 0) await Bun.sleep(left);
}
