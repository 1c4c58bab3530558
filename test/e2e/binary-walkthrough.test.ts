// The compiled binary as an operator uses it: the README's and the docs' walkthrough, PostgreSQL and `svc copy`
// both ways, healthcheck and backup.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { freePort } from "../ports.ts";
import { createTestDatabase, postgresAvailable } from "../postgres.ts";
import { runProcessSync } from "../support/cli.ts";
import { emptyFolderWithBinary, json, prepareBinary, start, stop, svcIn } from "./support/svc.ts";

const pgAvailable = await postgresAvailable();

function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

beforeAll(prepareBinary, 120_000);

describe("the compiled binary, alone in an empty folder", () => {
  test("the walkthrough: the README's Quick start and the docs pages' examples, pasted in order, all work", async () => {
    // The blocks marked <!-- walkthrough … --> go on from one another, page by page in this order, as a reader
    // pasting them into one shell would: the REST page sets the variables the others use.
    const root = join(import.meta.dir, "..", "..");
    const WALKTHROUGH: [page: string, blocks: number][] = [
      ["README.md", 1],
      ["docs/rest.md", 1],
      ["docs/sessions.md", 1],
      ["docs/graphql.md", 1],
      ["docs/retries.md", 1],
      ["docs/administration.md", 1],
    ];
    const marked = (text: string) =>
      [...text.matchAll(/<!-- walkthrough[^>]*-->\n```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    // A page with a walkthrough block that is not in the list would be skipped silently: it must be listed.
    const pages = ["README.md", ...[...new Glob("docs/*.md").scanSync(root)]];
    const withBlocks = pages.filter((page) => readFileSync(join(root, page), "utf8").includes("<!-- walkthrough"));
    expect(withBlocks.sort()).toEqual(WALKTHROUGH.map(([page]) => page).sort());
    const blocks = WALKTHROUGH.flatMap(([page, count]) => {
      const found = marked(readFileSync(join(root, page), "utf8"));
      expect({ page, blocks: found.length }).toEqual({ page, blocks: count });
      return found;
    });
    const dir = emptyFolderWithBinary();
    const running = await start(dir);
    // In the binary's folder, with it on the PATH: the administration block runs `svc` on the same database.
    const script = Bun.spawnSync(["bash", "-c", `set -euo pipefail\n${blocks.join("\n")}`], {
      cwd: dir,
      env: { PATH: `${dir}:${process.env.PATH ?? ""}`, SVC: running.base },
    });
    const out = script.stdout.toString();
    // Nothing on stderr but the commands on the box naming the database they used.
    const database = `sqlite:${join(realpathSync(dir), "data", "svc.db")}`;
    expect({ code: script.exitCode, stderr: script.stderr.toString().split("\n").filter(Boolean) }).toEqual({
      code: 0,
      stderr: [`svc admin: using ${database}`, `svc audit: using ${database}`],
    });
    // One error only, and on purpose: the stale ifVersion of the retries block.
    expect(out.match(/"errors"/g)).toHaveLength(1);
    expect(out).toContain('{"errors":[{"message":"The category changed since you read it: it is at version 2.');
    expect(out).toContain('"extensions":{"currentVersion":2,"code":"CONFLICT","reason":"version_mismatch"}');
    expect(out.match(/HTTP\/1\.1 \d+/g)).toEqual(["HTTP/1.1 201", "HTTP/1.1 200", "HTTP/1.1 204", "HTTP/1.1 204"]);
    // The README's Quick start: a first category, then the list with it.
    expect(out).toContain('{"data":{"categories":[{"id":"');
    expect(out).toContain('"name":"Books","colorHex":"#64748B","icon":"book","createdBy":"');
    // The retries block: a replayed sign-up, a 304, an If-Match that wins and one that is stale.
    expect(out).toContain("201 replayed=\n201 replayed=true\n");
    expect(out).toContain("\n304\n");
    expect(out).toContain('"username":"Ann"');
    expect(out).toContain('"code":"precondition_failed"}\n412\n');
    expect(out).toContain('{"data":{"updateCategory":{"version":2}}}');
    // Mail is on (logged, in development): the new address waits for its link.
    expect(out).toContain('"pending_email":"ann@example.org"');
    expect(out).toContain('"description":"Trips"');
    expect(out).toContain('{"data":{"deleteCategory":true}}');
    expect(out).toContain("created administrator root");
    expect(out).toContain('"status":"disabled"');
    expect(out).toContain('"action":"password_reset.redeemed"');
    expect(out).toContain("password_reset.redeemed  success  actor=");
    // An account an administrator made, and an invitation for dee, shown once and listed without its code.
    expect(out).toContain(
      '"username":"cyd","email":"cyd@example.com","email_verified":false,"email_verified_at":null,"role":"user"',
    );
    const invitation = /"code":"([0-9A-Z-]{39})","email":"dee@example.com"/.exec(out);
    expect(invitation).not.toBeNull();
    expect(out.split(invitation![1]!)).toHaveLength(2);
    expect(await stop(running)).toBe(0);
    // A log shipper reads svc's output a line at a time: each one JSON object. (Elysia's Sucrose printed
    // warnings among them, from hooks it could not read once the build had minified them.)
    const notJson = running
      .output()
      .split("\n")
      .filter((line) => line !== "" && !isJsonObject(line));
    expect(notJson).toEqual([]);
  }, 30_000);

  test.skipIf(!pgAvailable)(
    "serves from PostgreSQL, and `svc copy` moves SQLite → PostgreSQL → SQLite with logins, tokens, sessions, roles and the audit log intact",
    async () => {
      const dir = emptyFolderWithBinary();
      const database = await createTestDatabase("binary");
      try {
        const onSqlite = await start(dir);
        await json(onSqlite.base, "POST", "/svc-api/v1/users/create", {
          username: "ann",
          email: "ann@example.com",
          password: "correct horse",
        });
        const { token, refresh_token: refresh } = (
          await json(onSqlite.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" })
        ).body;
        await json(
          onSqlite.base,
          "POST",
          "/graphql",
          { query: 'mutation { createCategory(input: { name: "Moved" }) { id } }' },
          token,
        );
        expect(await stop(onSqlite)).toBe(0);
        // An administrator made on the box, by the binary.
        const made = runProcessSync(
          [...svcIn(dir), "admin", "create", "--username", "root", "--email", "root@example.com", "--password-stdin"],
          { cwd: dir, env: { PATH: process.env.PATH ?? "" }, stdin: "correct horse battery\n" },
        );
        expect(made.code).toBe(0);

        const copy = (from: string, to: string, ...extra: string[]) =>
          runProcessSync([...svcIn(dir), "copy", "--from", from, "--to", to, ...extra], {
            cwd: dir,
            env: { PATH: process.env.PATH ?? "" },
          });
        // Only serve and migrate make a database: the target first, then the copy.
        const migrate = (url: string) =>
          runProcessSync([...svcIn(dir), "migrate"], {
            cwd: dir,
            env: { PATH: process.env.PATH ?? "", SVC_DATABASE_URL: url },
          }).code;
        expect(migrate(database.url)).toBe(0);
        const first = copy("sqlite:data/svc.db", database.url);
        expect(first.code).toBe(0);
        expect(first.stderr).toContain("copied 2 users and 1 categories; counts match the source");
        const again = copy("sqlite:data/svc.db", database.url);
        expect(again.code).toBe(1);
        expect(again.stderr).toContain("--force");
        expect(copy("sqlite:data/svc.db", database.url, "--force").code).toBe(0);

        const onPostgres = await start(dir, { SVC_DATABASE_URL: database.url });
        expect((await json(onPostgres.base, "GET", "/svc/health")).body.checks).toEqual({
          database: "ok",
          storage: "ok",
        });
        // The token issued on SQLite still works: same secret, same user id and token version.
        expect(
          (await json(onPostgres.base, "POST", "/graphql", { query: "{ categories { name } }" }, token)).body,
        ).toEqual({ data: { categories: [{ name: "Moved" }] } });
        // So does its session: the refresh token rotates on PostgreSQL.
        const renewed = await json(onPostgres.base, "POST", "/svc-api/v1/auth/refresh", { refresh_token: refresh });
        expect(renewed.status).toBe(200);
        expect(
          (
            await json(onPostgres.base, "POST", "/svc-api/v1/auth/login", {
              username: "ann",
              password: "correct horse",
            })
          ).status,
        ).toBe(200);
        const root = await json(onPostgres.base, "POST", "/svc-api/v1/auth/login", {
          username: "root",
          password: "correct horse battery",
        });
        const accounts = await json(onPostgres.base, "GET", "/svc-api/v1/admin/users", undefined, root.body.token);
        expect(accounts.body.map((u: { username: string; role: string }) => `${u.username} ${u.role}`)).toEqual([
          "ann user",
          "root admin",
        ]);
        await json(onPostgres.base, "POST", "/svc-api/v1/users/create", {
          username: "bob",
          email: "bob@example.com",
          password: "correct horse",
        });
        expect(await stop(onPostgres)).toBe(0);

        expect(migrate("sqlite:back/svc.db")).toBe(0);
        const back = copy(database.url, "sqlite:back/svc.db");
        expect(back.code).toBe(0);
        expect(back.stderr).toContain("copied 3 users and 1 categories");
        // The log made on SQLite and on PostgreSQL came along, in order.
        const audit = runProcessSync([...svcIn(dir), "audit", "--json", "--action", "user.created"], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? "", SVC_DATABASE_URL: "sqlite:back/svc.db" },
        });
        expect(audit.code).toBe(0);
        const created = audit.stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line));
        expect(created.map((e: { client_address: string }) => e.client_address)).toEqual([
          expect.any(String),
          "cli",
          expect.any(String),
        ]);
        const onCopy = await start(dir, { SVC_DATABASE_URL: "sqlite:back/svc.db" });
        const back2 = await json(onCopy.base, "POST", "/svc-api/v1/auth/refresh", {
          refresh_token: renewed.body.refresh_token,
        });
        expect(back2.status).toBe(200);
        expect(
          (await json(onCopy.base, "POST", "/svc-api/v1/auth/login", { username: "bob", password: "correct horse" }))
            .status,
        ).toBe(200);
        expect(await stop(onCopy)).toBe(0);
      } finally {
        await database.drop();
      }
    },
    60_000,
  );

  test("healthcheck says ready (0) only while svc serves, and backup snapshots the live database", async () => {
    const dir = emptyFolderWithBinary();
    const port = String(freePort());
    const running = await start(dir, { SVC_PORT: port });
    const run = (...args: string[]) =>
      runProcessSync([...svcIn(dir), ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", SVC_PORT: port } });
    expect(run("healthcheck").code).toBe(0);
    await json(running.base, "POST", "/svc-api/v1/users/create", {
      username: "ann",
      email: "ann@example.com",
      password: "correct horse",
    });
    const backup = run("backup", "snapshot.db");
    expect(backup.code).toBe(0);
    expect(await stop(running)).toBe(0);
    expect(run("healthcheck").code).toBe(1);

    // Restore: serve from the snapshot.
    const restored = await start(dir, { SVC_DATABASE_URL: "sqlite:snapshot.db" });
    expect(
      (await json(restored.base, "POST", "/svc-api/v1/auth/login", { username: "ann", password: "correct horse" }))
        .status,
    ).toBe(200);
    expect(await stop(restored)).toBe(0);
  }, 30_000);
});
