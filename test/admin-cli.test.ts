// `svc admin`, `svc user` and `svc audit`: in process through runCli, at a real terminal (a PTY), and
// against a serving svc in another process, on SQLite and on PostgreSQL.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { SecretInput } from "../src/admin/secret-input.ts";
import { runCli } from "../src/cli.ts";
import { openStore } from "../src/db/open.ts";
import { parseConfig } from "../src/config.ts";
import { TEST_SECRET, testApp } from "./helpers.ts";
import { freePort } from "./ports.ts";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";

const postgres = await postgresAvailable();
const dir = mkdtempSync(join(tmpdir(), "svc-admin-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const PASSWORD = "correct horse battery";

let files = 0;
const freshUrl = () => `sqlite:${join(dir, `svc-${++files}.db`)}`;
/** A new, empty svc database, made as an operator would: with `svc migrate`. */
async function freshDatabase(): Promise<string> {
  const url = freshUrl();
  expect((await cli(url, ["migrate"])).code).toBe(0);
  return url;
}
/** What every command on a database says first on stderr: which database it is. */
const using = (command: string, url: string) => `svc ${command}: using ${url}\n`;

/** Stdin as a pipe holding `text`, or as a terminal answering each prompt in turn. */
function secrets(text: string | null, answers: string[] = []): SecretInput {
  return {
    isTTY: text === null,
    readAll: async () => (text ?? "").replace(/\r?\n$/, ""),
    ask: async () => answers.shift() ?? "",
  };
}

async function cli(url: string, argv: string[], stdin: SecretInput = secrets(null)) {
  let out = "";
  let err = "";
  const code = await runCli(
    argv,
    { SVC_DATABASE_URL: url, SVC_ENV: "test", SVC_PASSWORD_COST: "minimal" },
    {
      out: { write: (t: string) => (out += t) },
      err: { write: (t: string) => (err += t) },
      secrets: stdin,
    },
  );
  return { code, out, err };
}

const create = (url: string, username: string, stdin = secrets(`${PASSWORD}\n`), extra = ["--password-stdin"]) =>
  cli(url, ["admin", "create", "--username", username, "--email", `${username}@example.com`, ...extra], stdin);

/** The same database as a store, for looking at what a command did. */
async function inspect<T>(url: string, look: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>) {
  const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
  try {
    return await look(store);
  } finally {
    await store.close();
  }
}

describe("svc admin create", () => {
  test("makes an administrator from a password on stdin, recorded in the audit log as the CLI's doing", async () => {
    const url = await freshDatabase();
    const made = await create(url, "root");
    expect(made).toMatchObject({ code: 0, err: using("admin", url) });
    expect(made.out).toMatch(/^created administrator root \([0-9a-f-]{36}\)\n$/);
    const user = await inspect(url, (store) => store.users.findByLogin("root"));
    expect(user).toMatchObject({ role: "admin", status: "active", email: "root@example.com" });
    expect(await Bun.password.verify(PASSWORD, user!.passwordHash)).toBe(true);
    const events = await inspect(url, (store) => store.audit.list({ limit: 10 }));
    expect(events).toMatchObject([
      { action: "user.created", actorId: null, targetId: user!.id, clientAddress: "cli", detail: '{"role":"admin"}' },
    ]);
  });

  test("asks twice at a terminal; differing answers create nothing (exit 1)", async () => {
    const url = await freshDatabase();
    const asked = await create(url, "root", secrets(null, [PASSWORD, PASSWORD]), []);
    expect(asked.code).toBe(0);
    const differ = await create(url, "other", secrets(null, [PASSWORD, "something else"]), []);
    expect(differ).toMatchObject({ code: 1, err: "svc admin: the passwords differ; nothing was created\n" });
    expect(await inspect(url, (store) => store.users.findByLogin("other"))).toBeNull();
  });

  test("usage errors exit 2: a password as an argument, no terminal and no --password-stdin, missing or unknown options", async () => {
    const url = freshUrl();
    const cases: string[][] = [
      ["admin", "create", "--username", "x", "--email", "x@example.com", "--password", PASSWORD],
      ["admin", "create", "--username", "x", "--email", "x@example.com", `--password=${PASSWORD}`],
      ["admin", "create", "--username", "x", "--email", "x@example.com"],
      ["admin", "create", "--username", "x"],
      ["admin", "create", "--username", "x", "--email", "x@example.com", "--role", "god"],
      ["admin", "delete"],
      ["admin"],
    ];
    for (const argv of cases) {
      const result = await cli(url, argv, secrets(""));
      expect({ argv, code: result.code }).toEqual({ argv, code: 2 });
      expect(result.err).toContain("usage: svc admin create");
      expect(result.err).not.toContain(PASSWORD);
    }
    expect(await inspect(url, (store) => store.users.findByLogin("x"))).toBeNull();
  });

  test("the API's rules hold: a common password or a taken name is refused (exit 1) naming the problem", async () => {
    const url = await freshDatabase();
    await create(url, "root");
    const weak = await create(url, "weak", secrets("password\n"));
    expect(weak).toMatchObject({
      code: 1,
      err: `${using("admin", url)}svc admin: password is too common: it appears in lists of breached passwords\n`,
    });
    const taken = await create(url, "ROOT");
    expect(taken.code).toBe(1);
    expect(taken.err).toStartWith(`${using("admin", url)}svc admin: `);
    expect(await inspect(url, (store) => store.users.activeAdmins())).toBe(1);
  });
});

describe("on a database that is not there", () => {
  const COMMANDS = [
    ["admin", "create", "--username", "root", "--email", "root@example.com", "--password-stdin"],
    ["user", "list"],
    ["user", "promote", "root"],
    ["user", "reset-password", "root"],
    ["user", "create", "--username", "ann", "--email", "ann@example.com", "--password-stdin"],
    ["invitation", "create"],
    ["invitation", "list"],
    ["audit", "--limit", "5"],
  ];

  test("every command is one line naming the file by its full path, exit 1, and nothing is created", async () => {
    // As if run in the wrong folder: the default sqlite:data/svc.db is relative to it.
    const folder = join(dir, "wrong-folder");
    const path = join(folder, "data", "svc.db");
    const relativePath = relative(process.cwd(), path);
    const cases = [
      { url: `sqlite:${path}`, err: `no database at ${path}` },
      {
        url: `sqlite:${relativePath}`,
        err: `no database at ${path} (the path ${relativePath} is taken from the current folder)`,
      },
    ];
    for (const { url, err } of cases) {
      for (const argv of COMMANDS) {
        const result = await cli(url, argv, secrets(`${PASSWORD}\n`));
        expect({ argv, ...result }).toEqual({ argv, code: 1, out: "", err: `svc ${argv[0]}: ${err}\n` });
      }
    }
    expect(existsSync(folder)).toBe(false);
  });

  test.skipIf(!postgres)(
    "on PostgreSQL, a database without svc's tables: one line saying so, exit 1, and it stays without them",
    async () => {
      const database = await createTestDatabase("admin_cli_bare");
      try {
        const url = new URL(database.url);
        for (const argv of COMMANDS) {
          const result = await cli(database.url, argv, secrets(`${PASSWORD}\n`));
          expect({ argv, ...result }).toEqual({
            argv,
            code: 1,
            out: "",
            err: `svc ${argv[0]}: postgres://${url.username}@${url.host}${url.pathname} is not an svc database (it has no svc tables)\n`,
          });
        }
        const db = new SQL({ url: database.url, max: 1 });
        const [row] =
          await db`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema IN ('public', 'drizzle')`;
        await db.close();
        expect(row.n).toBe(0);
      } finally {
        await database.drop();
      }
    },
  );
});

describe("svc user", () => {
  async function withUsers() {
    const url = await freshDatabase();
    await create(url, "root");
    const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
    const app = await testApp({ on: store });
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    return { url, app, ann, bob, store };
  }

  test("list prints every account, or those a --search prefix matches", async () => {
    const { url, store } = await withUsers();
    const all = await cli(url, ["user", "list"]);
    expect(all.code).toBe(0);
    const lines = all.out.trim().split("\n");
    expect(lines[0]).toBe("id\tusername\temail\trole\tstatus\tlast login");
    expect(lines.slice(1).map((line) => line.split("\t").slice(1, 5))).toEqual([
      ["root", "root@example.com", "admin", "active"],
      ["ann", "ann@example.com", "user", "active"],
      ["bob", "bob@example.com", "user", "active"],
    ]);
    expect(lines[1]!.endsWith("\tnever")).toBe(true);
    expect(lines[2]!).toMatch(/\t\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    const some = await cli(url, ["user", "list", "--search", "AN"]);
    expect(some.out.trim().split("\n")).toHaveLength(2);
    await store.close();
  });

  test("promote, demote, disable and enable act at once on the serving app; the last admin stays (exit 1)", async () => {
    const { url, app, ann, store } = await withUsers();
    expect((await cli(url, ["user", "promote", "ann"])).out).toBe("ann: role admin, active\n");
    expect((await app.call("GET", "/svc-api/v1/admin/users", { token: ann.token })).status).toBe(200);
    expect((await cli(url, ["user", "demote", "ANN@example.com"])).out).toBe("ann: role user, active\n");
    expect((await app.call("GET", "/svc-api/v1/admin/users", { token: ann.token })).status).toBe(403);
    const disabled = await cli(url, ["user", "disable", ann.user.id]);
    expect(disabled.out).toBe("ann: role user, disabled (its sessions and tokens ended)\n");
    expect((await app.call("GET", "/svc-api/v1/users/me", { token: ann.token })).status).toBe(401);
    const login = { body: { username: "ann", password: ann.password } };
    expect((await app.call("POST", "/svc-api/v1/auth/login", login)).status).toBe(403);
    expect((await cli(url, ["user", "enable", "ann"])).code).toBe(0);
    expect((await app.call("POST", "/svc-api/v1/auth/login", login)).status).toBe(200);

    const last = await cli(url, ["user", "demote", "root"]);
    expect(last.code).toBe(1);
    expect(last.err).toStartWith(`${using("user", url)}svc user: This is the last active administrator`);
    const unknown = await cli(url, ["user", "disable", "nobody"]);
    expect(unknown).toMatchObject({
      code: 1,
      err: `${using("user", url)}svc user: no user is named "nobody" (by username, e-mail or id)\n`,
    });
    for (const argv of [
      ["user"],
      ["user", "promote"],
      ["user", "promote", "a", "b"],
      ["user", "frobnicate", "ann"],
      ["user", "list", "--all"],
    ]) {
      expect((await cli(url, argv)).code).toBe(2);
    }
    await store.close();
  });

  test("reset-password prints a code and its expiry; the user redeems it through the API", async () => {
    const { url, app, ann, store } = await withUsers();
    const printed = await cli(url, ["user", "reset-password", "ann"]);
    expect(printed.code).toBe(0);
    const code = /^reset code for ann: (\S+)\nexpires (\S+);/.exec(printed.out);
    expect(code).not.toBeNull();
    expect(Date.parse(code![2]!) - Date.now()).toBeGreaterThan(3500_000);
    const redeemed = await app.call("POST", "/svc-api/v1/auth/password-reset", {
      body: { username: "ann", reset_code: code![1], new_password: "a brand new secret" },
    });
    expect(redeemed.status).toBe(200);
    expect((await app.call("GET", "/svc-api/v1/users/me", { token: ann.token })).status).toBe(401);
    await store.close();
  });
});

describe("svc user create", () => {
  const make = (url: string, username: string, extra: string[] = [], stdin = secrets(`${PASSWORD}\n`)) =>
    cli(url, ["user", "create", "--username", username, "--email", `${username}@example.com`, ...extra], stdin);

  test("makes an account of either role, whatever SVC_SIGNUP says, audited as admin.user.created by the CLI", async () => {
    const url = await freshDatabase();
    const made = await make(url, "ann", ["--password-stdin"]);
    expect(made).toMatchObject({ code: 0, err: using("user", url) });
    expect(made.out).toMatch(/^created user ann \([0-9a-f-]{36}\)\n$/);
    const boss = await make(url, "boss", ["--role", "admin"], secrets(null, [PASSWORD, PASSWORD]));
    expect(boss.out).toMatch(/^created administrator boss \(/);
    const ann = await inspect(url, (store) => store.users.findByLogin("ann"));
    expect(ann).toMatchObject({ role: "user", status: "active", email: "ann@example.com" });
    expect(await Bun.password.verify(PASSWORD, ann!.passwordHash)).toBe(true);
    expect((await inspect(url, (store) => store.users.findByLogin("boss")))?.role).toBe("admin");
    const events = await inspect(url, (store) => store.audit.list({ action: "admin.user.created", limit: 10 }));
    expect(events).toMatchObject([
      { actorId: null, clientAddress: "cli", detail: '{"role":"admin"}' },
      { actorId: null, targetId: ann!.id, clientAddress: "cli", detail: '{"role":"user"}' },
    ]);
    // The API's own: an account made while sign-up is closed logs in.
    const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
    const app = await testApp({ on: store, config: { signup: { mode: "closed" } } });
    const login = await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: PASSWORD } });
    expect(login.status).toBe(200);
    await store.close();
  });

  test("refusals: differing passwords and broken rules exit 1; a password argument, a bad role or missing options exit 2", async () => {
    const url = await freshDatabase();
    expect(await make(url, "ann", [], secrets(null, [PASSWORD, "something else"]))).toMatchObject({
      code: 1,
      err: "svc user: the passwords differ; nothing was created\n",
    });
    const weak = await make(url, "ann", ["--password-stdin"], secrets("password\n"));
    expect(weak).toMatchObject({
      code: 1,
      err: `${using("user", url)}svc user: password is too common: it appears in lists of breached passwords\n`,
    });
    expect((await make(url, "ann", ["--password-stdin"])).code).toBe(0);
    const taken = await cli(
      url,
      ["user", "create", "--username", "ANN", "--email", "other@example.com", "--password-stdin"],
      secrets(`${PASSWORD}\n`),
    );
    expect(taken).toMatchObject({ code: 1, err: `${using("user", url)}svc user: Username taken\n` });
    for (const argv of [
      ["user", "create", "--username", "x", "--email", "x@example.com", "--password", PASSWORD],
      ["user", "create", "--username", "x", "--email", "x@example.com", "--role", "root", "--password-stdin"],
      ["user", "create", "--username", "x", "--password-stdin"],
      ["user", "create", "--username", "x", "--email", "x@example.com"],
      ["user", "create", "extra", "--username", "x", "--email", "x@example.com", "--password-stdin"],
    ]) {
      const result = await cli(url, argv, secrets(""));
      expect({ argv, code: result.code }).toEqual({ argv, code: 2 });
      expect(result.err).toContain("usage: svc user create");
      expect(result.err).not.toContain(PASSWORD);
    }
    expect(await inspect(url, (store) => store.users.findByLogin("x"))).toBeNull();
  });
});

describe("svc invitation", () => {
  test("create prints a code once (for an address, or anyone; --expires or SVC_INVITATION_TTL); it signs up through the API", async () => {
    const url = await freshDatabase();
    const made = await cli(url, ["invitation", "create", "--email", "Ann@example.com", "--expires", "2h"]);
    expect(made).toMatchObject({ code: 0, err: using("invitation", url) });
    const printed = /^invitation code: (\S+)\nid (\S+), for ann@example\.com, expires (\S+); it works once/.exec(
      made.out,
    );
    expect(printed).not.toBeNull();
    const hours = (Date.parse(printed![3]!) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(1.9);
    expect(hours).toBeLessThanOrEqual(2);
    const anyone = await cli(url, ["invitation", "create"]);
    const days = (Date.parse(/expires (\S+);/.exec(anyone.out)![1]!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
    expect(anyone.out).toContain(", for any e-mail address, ");

    const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
    const app = await testApp({ on: store, config: { signup: { mode: "invite" } } });
    const body = { username: "ann", email: "ann@example.com", password: PASSWORD, invitation: printed![1] };
    expect((await app.call("POST", "/svc-api/v1/users/create", { body })).status).toBe(201);
    const again = await app.call("POST", "/svc-api/v1/users/create", {
      body: { ...body, username: "bob", email: "b@example.com" },
    });
    expect(again.status).toBe(403);
    await store.close();
    const events = await inspect(url, (s) => s.audit.list({ action: "invitation.issued", limit: 10 }));
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ actorId: null, targetId: printed![2], clientAddress: "cli" });
  });

  test("list shows each without its code, newest first; revoke removes one (exit 1 for an unknown id)", async () => {
    const url = await freshDatabase();
    const codes: string[] = [];
    for (const extra of [["--email", "cy@example.com"], []]) {
      const made = await cli(url, ["invitation", "create", ...extra]);
      codes.push(/^invitation code: (\S+)/.exec(made.out)![1]!);
    }
    const listed = await cli(url, ["invitation", "list"]);
    expect(listed).toMatchObject({ code: 0, err: using("invitation", url) });
    const lines = listed.out.trim().split("\n");
    expect(lines[0]).toBe("id\temail\tcreated by\tcreated\texpires\tused\tused by");
    expect(lines.slice(1).map((line) => line.split("\t").filter((_, i) => [1, 2, 5, 6].includes(i)))).toEqual([
      ["any", "cli", "-", "-"],
      ["cy@example.com", "cli", "-", "-"],
    ]);
    for (const code of codes) expect(listed.out).not.toContain(code);
    const id = lines[1]!.split("\t")[0]!;
    expect(await cli(url, ["invitation", "revoke", id])).toMatchObject({ code: 0, out: `revoked invitation ${id}\n` });
    expect((await cli(url, ["invitation", "list"])).out.trim().split("\n")).toHaveLength(2);
    expect(await cli(url, ["invitation", "revoke", id])).toMatchObject({
      code: 1,
      err: `${using("invitation", url)}svc invitation: No invitation has this id.\n`,
    });
    const events = await inspect(url, (s) => s.audit.list({ action: "invitation.revoked", limit: 10 }));
    expect(events).toMatchObject([{ actorId: null, targetId: id, clientAddress: "cli" }]);
  });

  test("usage errors exit 2: a bad --email is 1, naming the problem", async () => {
    const url = await freshDatabase();
    for (const argv of [
      ["invitation"],
      ["invitation", "send"],
      ["invitation", "create", "--expires", "forever"],
      ["invitation", "create", "--expires", "30s"],
      ["invitation", "create", "--expires", "400d"],
      ["invitation", "create", "extra"],
      ["invitation", "list", "--all"],
      ["invitation", "revoke"],
      ["invitation", "revoke", "a", "b"],
    ]) {
      const result = await cli(url, argv);
      expect({ argv, code: result.code }).toEqual({ argv, code: 2 });
      expect(result.err).toContain("usage: svc invitation create");
    }
    expect(await cli(url, ["invitation", "create", "--email", "nobody"])).toMatchObject({
      code: 1,
      err: `${using("invitation", url)}svc invitation: email must be an e-mail address such as ann@example.com\n`,
    });
    expect((await cli(url, ["invitation", "list"])).out.trim().split("\n")).toHaveLength(1);
  });
});

describe("svc audit", () => {
  test("prints events newest first, filtered by --since, --user and --action; --json as the API shows them", async () => {
    const url = await freshDatabase();
    await create(url, "root");
    const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
    const app = await testApp({ on: store });
    const ann = await app.signUp("ann");
    await app.call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: "wrong" } });
    await cli(url, ["user", "disable", "ann"]);

    const all = await cli(url, ["audit"]);
    expect(all).toMatchObject({ code: 0, err: using("audit", url) });
    const actions = all.out
      .trim()
      .split("\n")
      .map((line) => line.split("  ")[1]);
    expect(actions).toEqual(["admin.user.updated", "login.failed", "login.succeeded", "user.created", "user.created"]);
    expect(all.out.split("\n")[0]).toContain(`target=${ann.user.id}`);
    expect(all.out.split("\n")[0]).toContain("from=cli");
    const annOnly = await cli(url, ["audit", "--user", "ann", "--action", "login.failed"]);
    expect(annOnly.out.trim().split("\n")).toHaveLength(1);
    const json = await cli(url, ["audit", "--json", "--since", "1h", "--limit", "2"]);
    const events = json.out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      action: "admin.user.updated",
      target_id: ann.user.id,
      detail: { status: "disabled" },
    });
    expect((await cli(url, ["audit", "--since", new Date(Date.now() + 60_000).toISOString()])).out).toBe("");
    for (const argv of [
      ["audit", "--since", "yesterday"],
      ["audit", "--since", "9999999999999s"],
      ["audit", "--since", "9999999999999d"],
      ["audit", "--action", "user.hacked"],
      ["audit", "--limit", "0"],
      ["audit", "extra"],
    ]) {
      expect((await cli(url, argv)).code).toBe(2);
    }
    expect((await cli(url, ["audit", "--user", "nobody"])).code).toBe(1);
    await store.close();
  });
});

describe("svc admin create at a real terminal", () => {
  test("prompts without echo, and the password never shows on the screen", async () => {
    const url = await freshDatabase();
    let screen = "";
    const proc = Bun.spawn(["bun", MAIN, "admin", "create", "--username", "tty", "--email", "tty@example.com"], {
      env: { ...process.env, SVC_DATABASE_URL: url, SVC_ENV: "test", SVC_PASSWORD_COST: "minimal" },
      terminal: {
        data: (_, bytes) => {
          screen += new TextDecoder().decode(bytes);
        },
      },
    });
    const waitFor = async (text: string, count: number) => {
      for (let i = 0; i < 200 && screen.split(text).length - 1 < count; i++) await Bun.sleep(25);
    };
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
    const server = Bun.spawn(["bun", MAIN], { env, stdout: "pipe", stderr: "pipe" });
    try {
      const base = `http://127.0.0.1:${port}`;
      let ready = false;
      for (let i = 0; i < 200 && !ready; i++) {
        ready = await fetch(`${base}/svc/health/ready`).then(
          (r) => r.ok,
          () => false,
        );
        if (!ready) await Bun.sleep(50);
      }
      expect(ready).toBe(true);
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
    const proc = Bun.spawn(["bun", MAIN], {
      env: {
        ...process.env,
        SVC_DATABASE_URL: url,
        SVC_ENV: "test",
        SVC_PASSWORD_COST: "minimal",
        SVC_PORT: "0",
        SVC_JWT_SECRET: TEST_SECRET,
      },
      stdout: "pipe",
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
