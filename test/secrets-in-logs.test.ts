// Failure paths that carry secrets to the database, on every database: what they log (serve) and print
// (copy) must hold no password hash, password, token or statement parameters.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resetDigest } from "../src/auth/reset-codes.ts";
import { runCli } from "../src/process/cli.ts";
import { PRODUCTION_PASSWORD_COST } from "../src/config/index.ts";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { expectProblem, testApp, promote } from "./helpers.ts";
import { createTestDatabase, postgresAvailable, postgresConfig } from "./postgres.ts";

const pgAvailable = await postgresAvailable();
const dir = mkdtempSync(join(tmpdir(), "svc-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a brand new secret";

/** Every secret a user's requests carried, and the shapes any hash or token has. */
function expectNoSecrets(text: string, secrets: string[]): void {
  expect(text).not.toMatch(/\$argon2/);
  expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
  expect(text).not.toMatch(/\nparams: |"params"|Failing row contains \(/);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

/** Whatever a database quoting a row could carry: hashes (their parameters too), e-mails, digests. */
function expectNoRowValues(text: string, values: string[]): void {
  expectNoSecrets(text, values);
  expect(text).not.toMatch(/m=19456|t=2,p=1/);
  expect(text).not.toMatch(/@example\.com/);
  expect(text).not.toMatch(/[0-9a-f]{32}/i);
}

interface Opened {
  store: VersionedStore;
  url: string;
  /** Every write to `users` fails from now on, with a message that quotes nothing. */
  breakUsers(): Promise<void>;
  /** Every write to `users`, `password_resets` and `categories` fails from now on, quoting the row it refused. */
  quoteRows(): Promise<void>;
  close(): Promise<void>;
}

interface Target {
  name: string;
  skip: boolean;
  /** What a log line says of a trigger's refusal, its message withheld: the code, and where it can, the function. */
  refusal: string;
  open(): Promise<Opened>;
}

let n = 0;
const TARGETS: Target[] = [
  {
    name: "sqlite",
    skip: false,
    refusal: "SQLITE_CONSTRAINT_TRIGGER (a trigger's RAISE)",
    async open() {
      const path = join(dir, `db-${++n}.db`);
      const store = openSqliteStore(path);
      return {
        store,
        url: `sqlite:${path}`,
        async breakUsers() {
          const db = new Database(path);
          db.run(
            "CREATE TRIGGER no_user_insert BEFORE INSERT ON users BEGIN SELECT RAISE(ABORT, 'users are read-only now'); END",
          );
          db.run(
            "CREATE TRIGGER no_user_update BEFORE UPDATE ON users BEGIN SELECT RAISE(ABORT, 'users are read-only now'); END",
          );
          db.close();
        },
        async quoteRows() {
          const db = new Database(path);
          const refuse = (table: string, event: string, row: string) =>
            db.run(
              `CREATE TRIGGER quote_${table}_${event} BEFORE ${event} ON ${table} BEGIN SELECT RAISE(ABORT, 'refused row ' || ${row}); END`,
            );
          const user = "NEW.id || ',' || NEW.email || ',' || NEW.password_hash";
          const reset = "NEW.digest || ',' || NEW.user_id";
          const category = "NEW.name || ',' || NEW.description";
          for (const event of ["INSERT", "UPDATE"]) {
            refuse("users", event, user);
            refuse("password_resets", event, reset);
            refuse("categories", event, category);
          }
          db.close();
        },
        close: () => store.close(),
      };
    },
  },
  {
    name: "postgres",
    skip: !pgAvailable,
    refusal: "raise_exception (SQLSTATE P0001) in PL/pgSQL function",
    async open() {
      const database = await createTestDatabase("secrets");
      const store = await openPostgresStore(postgresConfig(database.url));
      return {
        store,
        url: database.url,
        async breakUsers() {
          const db = new SQL({ url: database.url, max: 1 });
          await db.unsafe(
            `CREATE FUNCTION no_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'users are read-only now'; END $$`,
          );
          await db.unsafe(
            "CREATE TRIGGER no_user_writes BEFORE INSERT OR UPDATE ON users FOR EACH ROW EXECUTE FUNCTION no_writes()",
          );
          await db.close();
        },
        async quoteRows() {
          const db = new SQL({ url: database.url, max: 1 });
          await db.unsafe(
            `CREATE FUNCTION quote_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused row %', NEW; END $$`,
          );
          for (const table of ["users", "password_resets", "categories"])
            await db.unsafe(
              `CREATE TRIGGER quote_${table} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION quote_row()`,
            );
          await db.close();
        },
        async close() {
          await store.close();
          await database.drop();
        },
      };
    },
  },
];

describe.each(TARGETS)("on $name", (target) => {
  test.skipIf(target.skip)("failed writes of users log no hash, password, token or parameters", async () => {
    const opened = await target.open();
    try {
      const app = await testApp({ on: opened.store });
      const { token } = await app.signUp("ann", PASSWORD);
      await opened.breakUsers();

      const change = await app.call("PUT", "/svc-api/v1/users/password", {
        token,
        body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
      });
      expectProblem(change, 500, "internal");
      const signUp = await app.call("POST", "/svc-api/v1/users/create", {
        body: { username: "bob", email: "bob@example.com", password: NEW_PASSWORD },
      });
      expectProblem(signUp, 500, "internal");

      const failures = (await app.logs()).filter((line) => JSON.parse(line).level === "error");
      expect(failures.length).toBeGreaterThanOrEqual(2);
      // Useful still: the driver's code and the statement are there, with the request id; the
      // trigger's own words are not (they could quote the row).
      for (const line of failures) {
        expect(line).toContain(target.refusal);
        expect(line).not.toContain("users are read-only now");
        expect(JSON.parse(line).request_id).toEqual(expect.any(String));
      }
      expectNoSecrets((await app.logs()).join("\n"), [PASSWORD, NEW_PASSWORD, token]);
    } finally {
      await opened.close();
    }
  });

  test.skipIf(target.skip)("a failed reset-code redemption logs no code, password or digest", async () => {
    const opened = await target.open();
    try {
      const app = await testApp({ on: opened.store });
      const ann = await app.signUp("ann", PASSWORD);
      const root = await app.signUp("root", PASSWORD);
      await promote(opened.store, root.user.id);
      const issued = await app.call("POST", `/svc-api/v1/admin/users/${ann.user.id}/password-reset`, {
        token: root.token,
      });
      const code = issued.body.reset_code as string;
      await opened.breakUsers();
      const redeemed = await app.call("POST", "/svc-api/v1/auth/password-reset", {
        body: { username: "ann", reset_code: code, new_password: NEW_PASSWORD },
      });
      expectProblem(redeemed, 500, "internal");
      const logs = (await app.logs()).join("\n");
      expect(logs).toContain(target.refusal);
      expectNoSecrets(logs, [
        PASSWORD,
        NEW_PASSWORD,
        code,
        code.replaceAll("-", ""),
        resetDigest(code.replaceAll("-", "")),
      ]);
    } finally {
      await opened.close();
    }
  });

  test.skipIf(target.skip || target.name !== "postgres")(
    "a password change cut off by the statement timeout logs no hash or password",
    async () => {
      const opened = await target.open();
      const locker = new SQL({ url: opened.url, max: 1 });
      try {
        const app = await testApp({ on: opened.store });
        const { token, user } = await app.signUp("ann", PASSWORD);
        // Another session holds the row: the UPDATE waits until statement_timeout (2 s here) cancels it.
        const held = await locker.reserve();
        await held`BEGIN`;
        await held`SELECT id FROM users WHERE id = ${user.id} FOR UPDATE`;
        const change = await app.call("PUT", "/svc-api/v1/users/password", {
          token,
          body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
        });
        await held`ROLLBACK`;
        held.release();
        expectProblem(change, 503, "database_unavailable");
        // One warn line (log-dedupe.ts), saying what the database did.
        const failure = (await app.logs()).find((line) => JSON.parse(line).msg.startsWith("database unavailable"));
        expect(JSON.parse(failure!)).toMatchObject({ level: "warn", code: "57014" });
        expect(failure).toContain("statement timeout");
        expectNoSecrets((await app.logs()).join("\n"), [PASSWORD, NEW_PASSWORD, token]);
      } finally {
        await locker.close();
        await opened.close();
      }
    },
  );

  test.skipIf(target.skip)("a trigger quoting the row on a password reset logs no hash, digest or e-mail", async () => {
    const opened = await target.open();
    try {
      // At the production cost, so that the hash's parameters are the ones a real row holds.
      const app = await testApp({ on: opened.store, config: { passwordCost: PRODUCTION_PASSWORD_COST } });
      const ann = await app.signUp("ann", PASSWORD);
      const root = await app.signUp("root", PASSWORD);
      await promote(opened.store, root.user.id);
      const issue = () =>
        app.call("POST", `/svc-api/v1/admin/users/${ann.user.id}/password-reset`, { token: root.token });
      const code = (await issue()).body.reset_code as string;
      await opened.quoteRows();

      const redeemed = await app.call("POST", "/svc-api/v1/auth/password-reset", {
        body: { username: "ann", reset_code: code, new_password: NEW_PASSWORD },
      });
      expectProblem(redeemed, 500, "internal");
      expectProblem(await issue(), 500, "internal");

      const logs = await app.logs();
      const failures = logs.filter((line) => JSON.parse(line).level === "error");
      expect(failures.length).toBeGreaterThanOrEqual(2);
      // What is left says which database refused and why, by code and by name.
      for (const line of failures)
        expect(line).toContain(target.name === "postgres" ? "P0001" : "SQLITE_CONSTRAINT_TRIGGER");
      const stored = await opened.store.users.findById(ann.user.id);
      expectNoRowValues(logs.join("\n"), [
        PASSWORD,
        NEW_PASSWORD,
        code,
        resetDigest(code.replaceAll("-", "")),
        stored!.passwordHash,
        stored!.passwordHash.split("$").at(-1)!,
        stored!.passwordHash.split("$").at(-2)!,
      ]);
    } finally {
      await opened.close();
    }
  });

  test.skipIf(target.skip)("a trigger quoting a category's row logs none of it (GraphQL)", async () => {
    const opened = await target.open();
    try {
      const app = await testApp({ on: opened.store });
      const { token } = await app.signUp("ann", PASSWORD);
      await opened.quoteRows();
      const note = "the private note 3f1c";
      const created = await app.graphql(
        `mutation { createCategory(input: { name: "Diary", description: "${note}" }) { id } }`,
        { token },
      );
      expect(created.body.errors[0].extensions.code).toBe("INTERNAL_SERVER_ERROR");
      const logs = await app.logs();
      const failures = logs.filter((line) => JSON.parse(line).level === "error");
      expect(failures.length).toBeGreaterThanOrEqual(1);
      for (const line of failures) expect(line).toContain(target.refusal);
      expectNoRowValues(logs.join("\n"), [PASSWORD, token, note, "Diary"]);
    } finally {
      await opened.close();
    }
  });

  test.skipIf(target.skip)("`svc copy --force` onto a trigger quoting the row prints no hash or e-mail", async () => {
    const source = join(dir, `source-${++n}.db`);
    const from = openSqliteStore(source);
    const app = await testApp({ on: from, config: { passwordCost: PRODUCTION_PASSWORD_COST } });
    for (const name of ["ann", "bob"]) await app.signUp(name, PASSWORD);
    const hashes = (await from.users.list({ limit: 10 })).map((user) => user.passwordHash);
    await from.close();

    const opened = await target.open();
    await opened.quoteRows();
    await opened.store.close();
    try {
      let out = "";
      const write = (t: string) => (out += t);
      const code = await runCli(
        ["copy", "--from", `sqlite:${source}`, "--to", opened.url, "--force"],
        {},
        {
          out: { write },
          err: { write },
        },
      );
      expect(code).toBe(1);
      expect(out).toContain("svc copy: nothing copied: ");
      expect(out).toContain(target.refusal);
      expectNoRowValues(out, [PASSWORD, ...hashes, ...hashes.map((hash) => hash.split("$").at(-1)!)]);
    } finally {
      await opened.close().catch(() => {});
    }
  });

  test.skipIf(target.skip)("a failed `svc copy` into it prints no hash or parameters", async () => {
    const source = join(dir, `source-${++n}.db`);
    const from = openSqliteStore(source);
    const app = await testApp({ on: from });
    for (const name of ["ann", "bob", "cyd"]) await app.signUp(name, PASSWORD);
    await from.close();

    const opened = await target.open();
    await opened.breakUsers();
    await opened.store.close();
    try {
      let err = "";
      const code = await runCli(
        ["copy", "--from", `sqlite:${source}`, "--to", opened.url],
        {},
        { out: { write: () => true }, err: { write: (t: string) => (err += t) } },
      );
      expect(code).toBe(1);
      expect(err).toContain("svc copy: nothing copied: ");
      expect(err).toContain(target.refusal);
      expectNoSecrets(err, [PASSWORD]);
    } finally {
      await opened.close().catch(() => {});
    }
  });
});
