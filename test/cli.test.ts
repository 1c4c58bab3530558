// The subcommands, called in process through runCli with captured output.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { newUser } from "./store/conformance.ts";
import { version } from "../package.json";
import { captureCli } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (argv: string[], env: Record<string, string> = {}) => captureCli(argv, env);

describe("svc <command>", () => {
  test("--help lists every command; <command> --help describes one", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const name of ["serve", "migrate", "backup", "copy", "version", "healthcheck"])
      expect(help.out).toContain(`svc ${name === "serve" ? "[serve]" : name}`);
    for (const name of ["serve", "migrate", "backup", "copy", "version", "healthcheck"]) {
      const one = await cli([name, "--help"]);
      expect(one.code).toBe(0);
      expect(one.out).toStartWith("usage: svc ");
    }
  });

  test("--help, each command's --help and a usage error fit 80 columns", async () => {
    const names = [
      "serve",
      "migrate",
      "backup",
      "check",
      "copy",
      "admin",
      "user",
      "invitation",
      "audit",
      "version",
      "healthcheck",
    ];
    const texts = [(await cli(["--help"])).out, (await cli(["frobnicate"])).err];
    for (const name of names) texts.push((await cli([name, "--help"])).out);
    texts.push((await cli(["user", "frobnicate"])).err);
    texts.push((await cli(["invitation", "frobnicate"])).err);
    const long = texts.flatMap((text) => text.split("\n")).filter((line) => line.length > 80);
    expect(long).toEqual([]);
    // Wrapping keeps every word: each summary still reads whole once its lines are joined.
    const help = (await cli(["--help"])).out.replace(/\n\s+/g, " ");
    expect(help).toContain(
      "Serve the API, configured by the SVC_* environment variables (see docs/configuration.md). The default.",
    );
    expect(help).toContain("svc user promote|demote|disable|enable|reset-password|verify-email|mfa-reset <user>");
    expect(help).toContain("svc invitation create [--email <address>] [--expires 7d]");
  });

  test("version prints the package version", async () => {
    expect(await cli(["version"])).toEqual({ code: 0, out: `svc ${version}\n`, err: "" });
    expect((await cli(["--version"])).out).toBe(`svc ${version}\n`);
  });

  test("an unknown command or stray arguments are usage errors (2)", async () => {
    expect((await cli(["frobnicate"])).code).toBe(2);
    expect((await cli(["serve", "--port", "1"])).code).toBe(2);
    expect((await cli(["backup"])).code).toBe(2);
    expect((await cli(["backup", "a", "b"])).code).toBe(2);
  });

  test("a bad setting is one line naming the variable, and exit code 2", async () => {
    const result = await cli(["migrate"], { SVC_DATABASE_URL: "mysql://x" });
    expect(result.code).toBe(2);
    expect(result.err).toStartWith("svc: SVC_DATABASE_URL: ");
    expect(result.err.trim().split("\n")).toHaveLength(1);
  });

  test("migrate creates and migrates the database, says it made a new one, then exits", async () => {
    const path = join(dir, "migrate", "svc.db");
    const result = await cli(["migrate"], { SVC_DATABASE_URL: `sqlite:${path}` });
    expect(result).toEqual({ code: 0, out: `created sqlite:${path}: a new, empty database\n`, err: "" });
    expect(await cli(["migrate"], { SVC_DATABASE_URL: `sqlite:${path}` })).toEqual({
      code: 0,
      out: `migrated sqlite:${path}\n`,
      err: "",
    });
    const db = new Database(path, { readonly: true });
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'users'").get()).toEqual({ name: "users" });
    db.close();
  });

  test("migrate on a missing database whose WAL is still there says it set the WAL aside, and makes an empty one", async () => {
    const path = join(dir, "orphaned", "svc.db");
    const store = openSqliteStore(path);
    await store.users.create(newUser("ann"));
    const wal = await Bun.file(`${path}-wal`).bytes();
    await store.close();
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
    await Bun.write(`${path}-wal`, wal);

    const result = await cli(["migrate"], { SVC_DATABASE_URL: `sqlite:${path}` });
    expect(result.code).toBe(0);
    expect(result.err).toMatch(
      new RegExp(
        `^svc migrate: the database file was missing but not its write-ahead log or journal: .* set aside \\(${path}-wal\\.orphaned-\\d{8}T\\d{6}Z\\) and a new, empty database made\n$`,
      ),
    );
    const db = new Database(path, { readonly: true });
    expect(db.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 0 });
    db.close();
  });

  test("backup writes a consistent copy to a new file, and refuses to overwrite", async () => {
    const path = join(dir, "live", "svc.db");
    const store = openSqliteStore(path); // stays open, as a serving svc would
    await store.users.create(newUser("ann"));
    const target = join(dir, "snapshot.db");
    const result = await cli(["backup", target], { SVC_DATABASE_URL: `sqlite:${path}` });
    expect(result.code).toBe(0);
    const copy = openSqliteStore(target);
    expect((await copy.users.findByLogin("ann"))?.email).toBe("ann@example.com");
    await copy.close();
    const again = await cli(["backup", target], { SVC_DATABASE_URL: `sqlite:${path}` });
    expect(again.code).toBe(1);
    expect(again.err).toContain("already exists");
    await store.close();
  });

  test("backup on PostgreSQL points to pg_dump; on a missing database it fails cleanly", async () => {
    const pg = await cli(["backup", join(dir, "x.db")], { SVC_DATABASE_URL: "postgres://u@127.0.0.1:1/db" });
    expect(pg.code).toBe(1);
    expect(pg.err).toContain("pg_dump");
    const missing = await cli(["backup", join(dir, "y.db")], {
      SVC_DATABASE_URL: `sqlite:${join(dir, "nope", "svc.db")}`,
    });
    expect(missing.code).toBe(1);
    expect(existsSync(join(dir, "y.db"))).toBe(false);
  });

  test("healthcheck exits 1 when nothing answers", async () => {
    const result = await cli(["healthcheck"], { SVC_PORT: "1" });
    expect(result.code).toBe(1);
    expect(result.err).toContain("svc healthcheck:");
  });
});
