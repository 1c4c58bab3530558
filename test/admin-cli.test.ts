// `svc admin create` and `svc user`, in process through runCli, on a database that is there and one that is
// not. The other commands are in user-cli.test.ts; a terminal and other processes in admin-cli-processes.test.ts.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { runCli } from "../src/process/cli.ts";
import { openStore } from "../src/db/open.ts";
import { parseConfig } from "../src/config/index.ts";
import { testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";
import { cli, create, dir, freshDatabase, freshUrl, inspect, PASSWORD, secrets, using } from "./support/admin-cli.ts";
import { hasFactor } from "../src/auth/mfa/step-up.ts";

const postgres = await postgresAvailable();

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
      {
        action: "user.created",
        actorId: null,
        targetId: user!.id,
        clientAddress: "cli",
        detail: '{"role":"admin","email_verified":true}',
      },
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
    expect(lines[0]).toBe("id\tusername\temail\trole\tstatus\tlast login\temail verified");
    expect(lines.slice(1).map((line) => line.split("\t").slice(1, 5))).toEqual([
      ["root", "root@example.com", "admin", "active"],
      ["ann", "ann@example.com", "user", "active"],
      ["bob", "bob@example.com", "user", "active"],
    ]);
    // root was made on the box (verified from the start), ann and bob signed up (not yet verified).
    expect(lines[1]!).toMatch(/\tnever\t\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(lines[2]!).toMatch(/\t\d{4}-\d\d-\d\dT[\d:.]+Z\tno$/);
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

  test("mfa-reset clears the user's factors, recorded as mfa.reset by the CLI; an unknown user exits 1", async () => {
    const { url, ann, bob, store } = await withUsers();
    const rows = new Database(url.slice("sqlite:".length));
    const at = new Date().toISOString();
    const passkey = rows.query(
      "INSERT INTO passkeys (id, user_id, credential_id, public_key, device_type, name, created_at) VALUES (?, ?, ?, 'key', 'singleDevice', 'Laptop', ?)",
    );
    for (const user of [ann, bob]) passkey.run(crypto.randomUUID(), user.user.id, crypto.randomUUID(), at);
    rows.run("INSERT INTO mfa_totp (user_id, secret_sealed, created_at, confirmed_at) VALUES (?, 'sealed', ?, ?)", [
      ann.user.id,
      at,
      at,
    ]);
    rows.run("INSERT INTO mfa_recovery_codes (digest, user_id, created_at) VALUES ('d1', ?, ?)", [ann.user.id, at]);
    const reset = await cli(url, ["user", "mfa-reset", "ann"]);
    expect(reset).toEqual({
      code: 0,
      out: "ann: second factors cleared (authenticator app, recovery codes, passkeys); they sign in with the password alone\n",
      err: using("user", url),
    });
    const left = (table: string, id: string) =>
      (rows.query(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).get(id) as { n: number }).n;
    expect([
      left("passkeys", ann.user.id),
      left("mfa_totp", ann.user.id),
      left("mfa_recovery_codes", ann.user.id),
    ]).toEqual([0, 0, 0]);
    expect(left("passkeys", bob.user.id)).toBe(1);
    expect(hasFactor(await store.mfa.factors(bob.user.id))).toBe(true);
    const events = await store.audit.list({ action: "mfa.reset", limit: 10 });
    expect(events).toMatchObject([{ action: "mfa.reset", actorId: null, targetId: ann.user.id, clientAddress: "cli" }]);

    const unknown = await cli(url, ["user", "mfa-reset", "nobody"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no user is named "nobody"');
    expect((await cli(url, ["user", "mfa-reset"])).code).toBe(2);
    expect(left("passkeys", bob.user.id)).toBe(1);
    rows.close();
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
