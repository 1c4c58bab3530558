// `svc user create`, `svc invitation` and `svc audit`, in process through runCli (test/support/admin-cli.ts).
import { describe, expect, test } from "bun:test";
import { runCli } from "../src/process/cli.ts";
import { openStore } from "../src/db/open.ts";
import { parseConfig } from "../src/config/index.ts";
import { testApp } from "./helpers.ts";
import { cli, create, freshDatabase, inspect, PASSWORD, secrets, using } from "./support/admin-cli.ts";

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
      { actorId: null, clientAddress: "cli", detail: '{"role":"admin","email_verified":true}' },
      { actorId: null, targetId: ann!.id, clientAddress: "cli", detail: '{"role":"user","email_verified":true}' },
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
    expect(actions).toEqual([
      "admin.user.updated",
      "login.failed",
      "login.succeeded",
      "email_verification.sent",
      "user.created",
      "user.created",
    ]);
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

describe("svc user verify-email", () => {
  test("marks a signed-up account's address verified, recorded as the CLI's doing; again, it says so", async () => {
    const url = await freshDatabase();
    const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
    const app = await testApp({ on: store });
    const ann = await app.signUp("ann");
    await store.close();
    expect((await inspect(url, (s) => s.users.findById(ann.user.id)))?.emailVerifiedAt).toBeNull();

    const marked = await cli(url, ["user", "verify-email", "ann@example.com"]);
    expect(marked).toMatchObject({ code: 0, err: using("user", url) });
    const at = (await inspect(url, (s) => s.users.findById(ann.user.id)))?.emailVerifiedAt;
    expect(marked.out).toBe(`ann: ann@example.com verified at ${at}\n`);
    expect((await cli(url, ["user", "verify-email", ann.user.id])).out).toBe(
      `ann: ann@example.com verified (already) at ${at}\n`,
    );
    const events = await inspect(url, (s) => s.audit.list({ action: "email_verification.marked", limit: 10 }));
    expect(events).toMatchObject([{ actorId: null, targetId: ann.user.id, clientAddress: "cli" }]);
    expect(await cli(url, ["user", "verify-email", "nobody"])).toMatchObject({ code: 1 });
    expect(await cli(url, ["user", "verify-email"])).toMatchObject({ code: 2 });
  });

  test("accounts made on the box are verified from the start, and get no mail", async () => {
    const url = await freshDatabase();
    expect((await create(url, "root")).code).toBe(0);
    const root = await inspect(url, (s) => s.users.findByLogin("root"));
    expect(root?.emailVerifiedAt).toBe(root!.createdAt);
    expect(await inspect(url, (s) => s.mail.list({ limit: 10 }))).toEqual([]);
  });
});
