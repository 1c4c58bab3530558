// Several processes on one SQLite file (SVC_REUSE_PORT): a token's state is kept in memory between
// commits (src/db/sqlite/commits.ts), so these prove that a commit by anyone ends what was kept: a
// revoked token is refused on the very next request, whichever connection or process revoked it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { expectProblem, testApp } from "./helpers.ts";

describe("two instances on one SQLite file", () => {
  let dir: string;
  let path: string;
  let stores: VersionedStore[];
  let a: Awaited<ReturnType<typeof testApp>>;
  let b: Awaited<ReturnType<typeof testApp>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-processes-"));
    path = join(dir, "svc.db");
    stores = [openSqliteStore(path), openSqliteStore(path)];
    a = await testApp({ on: stores[0] });
    b = await testApp({ on: stores[1] });
  });
  afterAll(async () => {
    for (const store of stores ?? []) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function signedIn(username: string): Promise<string> {
    const password = "correct horse battery staple";
    expect(
      (
        await a.call("POST", "/svc-api/v1/users/create", {
          body: { username, email: `${username}@example.com`, password },
        })
      ).status,
    ).toBe(201);
    const login = await a.call("POST", "/svc-api/v1/auth/login", { body: { username, password } });
    return (login.body as { token: string }).token;
  }

  test("a logout on B is refused on A at its next request, though A had just accepted the token", async () => {
    const token = await signedIn("ann");
    // Twice, so that A answers the second from what it kept.
    for (let i = 0; i < 2; i++) expect((await a.call("GET", "/svc-api/v1/users/me", { token })).status).toBe(200);
    expect((await b.call("POST", "/svc-api/v1/auth/logout", { token })).status).toBe(204);
    expectProblem(await a.call("GET", "/svc-api/v1/users/me", { token }), 401, "unauthorized");
    expect((await a.call("POST", "/graphql", { token, body: { query: "{ categories { id } }" } })).status).toBe(401);
  });

  test("the reads A answers wholly from memory (users page, GraphQL by GET) see B's logout and B's writes at once", async () => {
    const token = await signedIn("eve");
    const page = () => a.call("GET", "/svc-api/v1/users/all?limit=1000", { token });
    const byGet = () => a.call("GET", `/graphql?query=${encodeURIComponent("{ categories { name } }")}`, { token });
    // Twice each, so that A answers the second from what it kept.
    for (let i = 0; i < 2; i++) {
      expect((await page()).status).toBe(200);
      expect((await byGet()).status).toBe(200);
    }
    const before = (await page()).body as { username: string }[];
    // A write on B: a user A's kept page does not have, a category its kept answer does not list.
    const other = await b.call("POST", "/svc-api/v1/users/create", {
      body: { username: "eve-two", email: "eve-two@example.com", password: "correct horse battery staple" },
    });
    expect(other.status).toBe(201);
    const made = await b.call("POST", "/graphql", {
      token,
      body: { query: 'mutation { createCategory(input: { name: "Made on B" }) { id } }' },
    });
    expect(made.status).toBe(200);
    const after = (await page()).body as { username: string }[];
    expect(after.map((u) => u.username)).toEqual([...before.map((u) => u.username), "eve-two"]);
    expect(JSON.stringify((await byGet()).body)).toContain("Made on B");

    expect((await b.call("POST", "/svc-api/v1/auth/logout", { token })).status).toBe(204);
    expectProblem(await page(), 401, "unauthorized");
    expect((await byGet()).status).toBe(401);
  });

  test("a password change on B ends the old token on A at once, in GraphQL as in REST", async () => {
    const token = await signedIn("bob");
    expect((await a.call("POST", "/graphql", { token, body: { query: "{ categories { id } }" } })).status).toBe(200);
    expect((await a.call("GET", "/svc-api/v1/users/me", { token })).status).toBe(200);
    const changed = await b.call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: "correct horse battery staple", new_password: "another long passphrase 2" },
    });
    expect(changed.status).toBe(200);
    expectProblem(await a.call("GET", "/svc-api/v1/users/me", { token }), 401, "unauthorized");
    expect((await a.call("POST", "/graphql", { token, body: { query: "{ categories { id } }" } })).status).toBe(401);
  });

  test("a session ended by another process (a plain sqlite3 connection, not svc) is refused on A at once", async () => {
    const token = await signedIn("cay");
    for (let i = 0; i < 2; i++) expect((await a.call("GET", "/svc-api/v1/users/me", { token })).status).toBe(200);
    const user = (await a.call("GET", "/svc-api/v1/users/me", { token })).body as { id: string };
    const ended = Bun.spawnSync(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(path)}); db.run("PRAGMA busy_timeout = 5000"); db.run("DELETE FROM sessions WHERE user_id = ?", [${JSON.stringify(user.id)}]); db.close();`,
      ],
      { stderr: "pipe" },
    );
    expect(ended.exitCode).toBe(0);
    expectProblem(await a.call("GET", "/svc-api/v1/users/me", { token }), 401, "unauthorized");
  });

  test("a change made in this process by another connection is seen too (the users table's version, a rename)", async () => {
    const token = await signedIn("dee");
    const me = async () =>
      (await a.call("GET", "/svc-api/v1/users/me", { token })).body as { id: string; username: string };
    const { id } = await me();
    expect((await me()).username).toBe("dee");
    const raw = new Database(path);
    raw.run("PRAGMA busy_timeout = 5000");
    raw.transaction(() => {
      raw.run("UPDATE users SET username = 'dee2', username_key = 'dee2' WHERE id = ?", [id]);
      raw.run("UPDATE table_versions SET version = version + 1 WHERE name = 'users'");
    })();
    raw.close();
    expect((await me()).username).toBe("dee2");
  });
});
