// `svc admin` in other processes: at a real terminal (a PTY), against a serving svc on PostgreSQL, and the
// advice a start-up without an administrator logs.
import { describe, expect, test } from "bun:test";
import { TEST_SECRET } from "./helpers.ts";
import { freePort } from "./ports.ts";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";
import { cli, create, freshDatabase, freshUrl, inspect, PASSWORD } from "./support/admin-cli.ts";
import { SOURCE_SVC, spawnProcess } from "./support/cli.ts";
import { waitUntil } from "./support/wait.ts";

const postgres = await postgresAvailable();

describe("svc admin create at a real terminal", () => {
  test("prompts without echo, and the password never shows on the screen", async () => {
    const url = await freshDatabase();
    let screen = "";
    const proc = spawnProcess([...SOURCE_SVC, "admin", "create", "--username", "tty", "--email", "tty@example.com"], {
      env: { ...process.env, SVC_DATABASE_URL: url, SVC_ENV: "test", SVC_PASSWORD_COST: "minimal" },
      terminal: {
        data: (_, bytes) => {
          screen += new TextDecoder().decode(bytes);
        },
      },
    });
    const waitFor = (text: string, count: number) =>
      waitUntil(() => screen.split(text).length - 1 >= count, { what: `${JSON.stringify(text)} on the screen` });
    await waitFor("Password: ", 1);
    proc.terminal!.write(`${PASSWORD}\r`);
    await waitFor("Password again: ", 1);
    proc.terminal!.write(`${PASSWORD}\r`);
    expect(await proc.exited).toBe(0);
    proc.terminal!.close();
    expect(screen).toContain("created administrator tty");
    expect(screen).not.toContain(PASSWORD);
    expect((await inspect(url, (store) => store.users.findByLogin("tty")))?.role).toBe("admin");
  });
});

describe.skipIf(!postgres)("the commands against a serving svc on PostgreSQL", () => {
  test("create, disable and audit from the box reach the server in another process at once", async () => {
    const database = await createTestDatabase("admin_cli");
    const port = freePort();
    const env = {
      ...process.env,
      SVC_DATABASE_URL: database.url,
      SVC_ENV: "test",
      SVC_PASSWORD_COST: "minimal",
      SVC_PORT: String(port),
    };
    const server = spawnProcess(SOURCE_SVC, { env, timeoutMs: 60_000 });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitUntil(
        () =>
          fetch(`${base}/svc/health/ready`).then(
            (r) => r.ok,
            () => false,
          ),
        { what: "svc ready", timeoutMs: 10_000 },
      );
      const call = (method: string, path: string, body?: unknown, token?: string) =>
        fetch(`${base}${path}`, {
          method,
          headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      await call("POST", "/svc-api/v1/users/create", { username: "ann", email: "ann@example.com", password: PASSWORD });
      const ann = await (await call("POST", "/svc-api/v1/auth/login", { username: "ann", password: PASSWORD })).json();

      expect((await create(database.url, "root")).code).toBe(0);
      const root = await (
        await call("POST", "/svc-api/v1/auth/login", { username: "root", password: PASSWORD })
      ).json();
      expect((await call("GET", "/svc-api/v1/admin/users", undefined, root.token)).status).toBe(200);
      expect((await cli(database.url, ["user", "disable", "ann"])).code).toBe(0);
      expect((await call("GET", "/svc-api/v1/users/me", undefined, ann.token)).status).toBe(401);
      const reset = await cli(database.url, ["user", "reset-password", "root"]);
      expect(reset.out).toStartWith("reset code for root: ");
      const audit = await cli(database.url, ["audit", "--json"]);
      const actions = audit.out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).action);
      expect(actions.slice(0, 3)).toEqual(["password_reset.issued", "admin.user.updated", "login.succeeded"]);
    } finally {
      server.kill("SIGTERM");
      await server.exited;
      await database.drop();
    }
  });
});

describe("start-up without an administrator", () => {
  /** Starts svc on the database, returns its log lines up to and including the first after "svc listening", then stops it. */
  async function startupLines(url: string): Promise<string[]> {
    const proc = spawnProcess(SOURCE_SVC, {
      env: {
        ...process.env,
        SVC_DATABASE_URL: url,
        SVC_ENV: "test",
        SVC_PASSWORD_COST: "minimal",
        SVC_PORT: "0",
        SVC_JWT_SECRET: TEST_SECRET,
      },
    });
    let text = "";
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    // Up to the listening line, and then whatever start-up writes within a moment.
    while (!text.includes("svc listening")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    await Bun.sleep(300);
    proc.kill("SIGTERM");
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value);
    await proc.exited;
    return text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line).msg as string);
  }

  test("logs one line saying how to make one, and none once one exists", async () => {
    const url = freshUrl();
    const advice = (lines: string[]) => lines.filter((msg) => msg.includes("administrator"));
    expect(advice(await startupLines(url))).toEqual([
      "no active administrator: make one on this box with `svc admin create --username <name> --email <address>`",
    ]);
    await create(url, "root");
    expect(advice(await startupLines(url))).toEqual([]);
  });
});
