// The profile behind the binary's bytecode layout (`--bytecode-order`). Bun stores the bytecode of the
// functions a recorded run used together, at the front of the file, so a start and a day of requests
// read fewer of the binary's pages: less RSS after a load (docs/performance.md, "Footprint"). The
// build records the profile itself, from a session of the requests clients make, rather than
// committing one that would go stale as the code changes.
import type { Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";

const PASSWORD = "profile password 1";
/** Longer than any step takes (a login's hash is the slowest, some 50 ms): a stuck svc fails the build instead of hanging it. */
const STEP_TIMEOUT_MS = 30_000;
const CATEGORIES = "{ categories { id name description colorHex icon createdAt updatedAt version } }";

/**
 * Runs `binary` (built for this machine, with bytecode) on a scratch SQLite database through a
 * client's session, stops it the way a supervisor does, then starts it again on that database for one
 * health probe, and returns the two runs' profile, as `--bytecode-order` takes it. Throws, with svc's
 * output, if any step is answered unexpectedly: a binary that cannot serve this session is not one to ship.
 *
 * The restart's own profile goes first: a first start skips what every later start runs (the damage
 * check, the migrations' check: connection.ts), and with only the first start profiled those
 * functions lay out of the front of the file, which cost a restart 0.9 MB of RSS and its time
 * (bench/results.md, "#59: the footprint").
 */
export async function recordBytecodeOrder(binary: string, scratch: string): Promise<string> {
  const dir = mkdtempSync(join(scratch, "profile-"));
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64");
  const first = await profiledRun(binary, dir, "first", secret, session);
  const restart = await profiledRun(binary, dir, "restart", secret, (base) =>
    callSvc(base, "GET", "/svc/health", 200).then(() => {}),
  );
  const order = join(dir, "svc.order");
  await Bun.write(order, mergeOrders(readFileSync(restart, "utf8"), readFileSync(first, "utf8")));
  return order;
}

/**
 * One profile file of both: `front`'s entries, then those of `rest` not in it. Bun writes a version line
 * and then one line per function, in the order of first use.
 */
export function mergeOrders(front: string, rest: string): string {
  const [version, ...frontLines] = front.trimEnd().split("\n");
  const [otherVersion, ...restLines] = rest.trimEnd().split("\n");
  if (version !== otherVersion) throw new Error(`two profile versions: ${version} and ${otherVersion}`);
  return `${[...new Set([version, ...frontLines, ...restLines])].join("\n")}\n`;
}

/** Runs `binary` in `dir` through `steps`, stops it with SIGTERM, and returns the profile it wrote. */
async function profiledRun(
  binary: string,
  dir: string,
  name: string,
  secret: string,
  steps: (base: string) => Promise<void>,
): Promise<string> {
  const order = join(dir, `${name}.order`);
  const log = join(dir, `${name}.log`);
  const proc = Bun.spawn([binary], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      BUN_BYTECODE_ORDER_OUT: order,
      SVC_HOST: "127.0.0.1",
      SVC_PORT: "0",
      SVC_DATABASE_URL: `sqlite:${join(dir, "svc.db")}`,
      SVC_JWT_SECRET: secret,
    },
    stdout: Bun.file(log),
    stderr: "pipe",
  });
  try {
    const base = await listeningAddress(proc, log);
    await steps(base);
    proc.kill("SIGTERM");
    let timer: Timer | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), STEP_TIMEOUT_MS)));
    const exited = await Promise.race([proc.exited, late]);
    clearTimeout(timer);
    if (exited === "late") throw new Error("svc did not stop on SIGTERM");
    if (exited !== 0) throw new Error(`exited with ${exited}`);
    if (!(await Bun.file(order).exists())) throw new Error("no profile was written");
    return order;
  } catch (error) {
    proc.kill("SIGKILL");
    // The end of what svc said: its access lines would bury the reason.
    const logged = (existsSync(log) ? readFileSync(log, "utf8") : "").trimEnd().split("\n").slice(-10).join("\n");
    const said = `${logged}\n${await new Response(proc.stderr).text()}`;
    throw new Error(`recording the bytecode profile (${name} run) failed: ${(error as Error).message}\n${said}`);
  }
}

/** The address in svc's "svc listening" line, once it is in `log`. */
async function listeningAddress(proc: Subprocess, log: string): Promise<string> {
  const until = performance.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const text = existsSync(log) ? readFileSync(log, "utf8") : "";
    const line = text.split("\n").find((l) => l.includes('"svc listening"'));
    if (line) return (JSON.parse(line) as { address: string }).address;
    if (proc.exitCode !== null) throw new Error(`svc stopped before listening: ${text}`);
    if (performance.now() > until) throw new Error("svc did not listen");
    await Bun.sleep(5);
  }
}

/** One request of a profiled run; throws, with svc's answer, unless it is answered with `expected`. */
async function callSvc(base: string, method: string, path: string, expected: number, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status}, not ${expected}: ${text}`);
  return { text, etag: response.headers.get("etag") };
}

/** What a client does in its first minutes, reads repeated as a polling client repeats them. */
async function session(base: string): Promise<void> {
  const call = (method: string, path: string, expected: number, body?: unknown, token?: string) =>
    callSvc(base, method, path, expected, body, token);
  const graphql = (query: string, token: string) => call("POST", "/graphql", 200, { query }, token);

  await call("GET", "/svc/health", 200);
  await call("GET", "/svc/health/ready", 200);
  const created = JSON.parse(
    (
      await call("POST", "/svc-api/v1/users/create", 201, {
        username: "profile",
        email: "p@example.com",
        password: PASSWORD,
      })
    ).text,
  ) as { id: string };
  const login = JSON.parse(
    (await call("POST", "/svc-api/v1/auth/login", 200, { username: "profile", password: PASSWORD })).text,
  ) as { token: string; refresh_token: string };
  const token = login.token;
  await call("POST", "/svc-api/v1/auth/login", 401, { username: "profile", password: "not the password" });
  const category = JSON.parse(
    (await graphql('mutation { createCategory(input: { name: "Profile" }) { id version } }', token)).text,
  ) as { data: { createCategory: { id: string } } };
  const id = category.data.createCategory.id;
  await graphql(
    `mutation { updateCategory(id: "${id}", input: { description: "d" }, ifVersion: 1) { version } }`,
    token,
  );
  await graphql(
    `mutation { updateCategory(id: "${id}", input: { description: "e" }, ifVersion: 1) { version } }`,
    token,
  );
  for (let i = 0; i < 50; i++) {
    const page = await call("GET", "/svc-api/v1/users/all?limit=100", 200, undefined, token);
    await fetch(`${base}/svc-api/v1/users/all?limit=100`, {
      headers: { authorization: `Bearer ${token}`, "if-none-match": page.etag ?? "" },
      signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
    }).then((r) => r.text());
    await call("GET", "/svc-api/v1/users/me", 200, undefined, token);
    await call("GET", `/svc-api/v1/users/${created.id}`, 200, undefined, token);
    await graphql(CATEGORIES, token);
    await graphql(`{ listAllCategories(first: 10) { id name } category(id: "${id}") { name } }`, token);
    await call("GET", `/graphql?query=${encodeURIComponent(CATEGORIES)}`, 200, undefined, token);
  }
  await call("GET", "/svc-api/v1/users/me", 401);
  await call("POST", "/svc-api/v1/auth/refresh", 200, { refresh_token: login.refresh_token });
  // Mail is on here (logged, as in development), so a change of address waits for its link: 202.
  await call("PUT", "/svc-api/v1/users", 202, { email: "q@example.com", current_password: PASSWORD }, token);
  await graphql(`mutation { deleteCategory(id: "${id}") }`, token);
  await call("GET", "/svc/metrics", 200);
}
