// `svc copy` refuses what would lose data: a source that does not exist or is not svc's, an empty
// source over a full target, and rows the target could not store. Nothing is created at the source,
// and the target is left as it was. In process through runCli, SQLite and PostgreSQL targets.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/db/open.ts";
import { parseDatabaseUrl } from "../src/config/index.ts";
import { testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";
import { captureCli } from "./support/cli.ts";

const pgAvailable = await postgresAvailable();
const dir = mkdtempSync(join(tmpdir(), "svc-copy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = (name: string) => join(dir, `${++n}-${name}`);

async function cli(...argv: string[]) {
  const { code, err } = await captureCli(argv);
  return { code, err };
}

/** An svc database at `url` holding these users (and one category). */
async function populated(url: string, usernames: string[]): Promise<void> {
  const store = await openStore(parseDatabaseUrl(url, {}, "url"));
  const app = await testApp({ on: store });
  let token = "";
  for (const name of usernames) token = (await app.signUp(name)).token;
  if (token) await app.graphql('mutation { createCategory(input: { name: "Kept" }) { id } }', { token });
  await store.close();
}

async function counts(url: string) {
  const store = await openStore(parseDatabaseUrl(url, {}, "url"));
  try {
    return await store.counts();
  } finally {
    await store.close();
  }
}

interface Target {
  name: string;
  skip: boolean;
  /** A target database URL holding three users and a category. */
  make(): Promise<{ url: string; drop(): Promise<void> }>;
}

const TARGETS: Target[] = [
  {
    name: "sqlite",
    skip: false,
    async make() {
      const url = `sqlite:${fresh("target.db")}`;
      await populated(url, ["ann", "bob", "cyd"]);
      return { url, drop: async () => {} };
    },
  },
  {
    name: "postgres",
    skip: !pgAvailable,
    async make() {
      const database = await createTestDatabase("copy");
      await populated(database.url, ["ann", "bob", "cyd"]);
      return { url: database.url, drop: () => database.drop() };
    },
  },
];

describe.each(TARGETS)("svc copy to $name", (target) => {
  test.skipIf(target.skip)(
    "from a misspelt SQLite path: exit 1, nothing created, the target untouched even with --force",
    async () => {
      const { url, drop } = await target.make();
      try {
        const typo = fresh("typo.db");
        const reply = await cli("copy", "--from", `sqlite:${typo}`, "--to", url, "--force");
        expect(reply.code).toBe(1);
        expect(reply.err).toBe(`svc copy: nothing copied: no database at ${typo}\n`);
        expect(existsSync(typo)).toBe(false);
        expect(await counts(url)).toEqual({ users: 3, categories: 1 });
      } finally {
        await drop();
      }
    },
  );

  test.skipIf(target.skip)(
    "from a file that is not an svc database, or from memory: exit 1, the file unchanged",
    async () => {
      const { url, drop } = await target.make();
      try {
        const empty = fresh("empty.db");
        writeFileSync(empty, "");
        const reply = await cli("copy", "--from", `sqlite:${empty}`, "--to", url, "--force");
        expect(reply.code).toBe(1);
        expect(reply.err).toContain(`${empty} is not an svc database`);
        expect(Bun.file(empty).size).toBe(0);
        const memory = await cli("copy", "--from", "sqlite::memory:", "--to", url, "--force");
        expect(memory.code).toBe(1);
        expect(memory.err).toContain("an in-memory database is always empty");
        expect(await counts(url)).toEqual({ users: 3, categories: 1 });
      } finally {
        await drop();
      }
    },
  );

  test.skipIf(target.skip)(
    "an empty svc source over a non-empty target needs --allow-empty as well as --force",
    async () => {
      const { url, drop } = await target.make();
      try {
        const source = `sqlite:${fresh("empty-svc.db")}`;
        await populated(source, []);
        const refused = await cli("copy", "--from", source, "--to", url, "--force");
        expect(refused.code).toBe(1);
        expect(refused.err).toContain("holds no users or categories while the target holds 3 users and 1 categories");
        expect(refused.err).toContain("--allow-empty");
        expect(await counts(url)).toEqual({ users: 3, categories: 1 });

        const meant = await cli("copy", "--from", source, "--to", url, "--force", "--allow-empty");
        expect(meant.code).toBe(0);
        expect(await counts(url)).toEqual({ users: 0, categories: 0 });
      } finally {
        await drop();
      }
    },
  );

  test.skipIf(target.skip)(
    "a source row holding U+0000 (stored by an older svc): exit 1 naming the row and field, the target untouched",
    async () => {
      const { url, drop } = await target.make();
      try {
        const path = fresh("nul.db");
        await populated(`sqlite:${path}`, ["dan", "eve"]);
        const db = new Database(path);
        const { id } = db.query<{ id: string }, []>("SELECT id FROM users WHERE username = 'eve'").get()!;
        db.run("UPDATE users SET email = 'eve' || char(0) || '@example.com' WHERE id = ?", [id]);
        db.close();
        const reply = await cli("copy", "--from", `sqlite:${path}`, "--to", url, "--force");
        expect(reply.code).toBe(1);
        expect(reply.err).toContain(`user ${id} has U+0000 or an unpaired UTF-16 surrogate in its email`);
        expect(await counts(url)).toEqual({ users: 3, categories: 1 });
      } finally {
        await drop();
      }
    },
  );
});

describe("the source is never created or changed into an svc database", () => {
  test.skipIf(!pgAvailable)(
    "a PostgreSQL database without svc's tables is refused, and stays without them",
    async () => {
      const source = await createTestDatabase("copy_empty_source");
      try {
        const reply = await cli("copy", "--from", source.url, "--to", `sqlite:${fresh("target.db")}`);
        expect(reply.code).toBe(1);
        expect(reply.err).toContain("is not an svc database");
        const db = new SQL({ url: source.url, max: 1 });
        const [row] =
          await db`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema IN ('public', 'drizzle')`;
        await db.close();
        expect(row.n).toBe(0);
      } finally {
        await source.drop();
      }
    },
  );

  test("backup and copy say the same of a missing database", async () => {
    const missing = fresh("missing.db");
    const copy = await cli("copy", "--from", `sqlite:${missing}`, "--to", `sqlite:${fresh("t.db")}`);
    const backupEnv = { SVC_DATABASE_URL: `sqlite:${missing}` };
    const backup = await captureCli(["backup", fresh("b.db")], backupEnv);
    expect([copy.code, backup.code]).toEqual([1, 1]);
    expect(copy.err).toContain(`no database at ${missing}`);
    expect(backup.err).toContain(`no database at ${missing}`);
    expect(existsSync(missing)).toBe(false);
  });
});

describe("the target must be an svc database too: only serve and migrate make one", () => {
  test("a target that is not there is refused too, naming it and how to make it; nothing is created", async () => {
    const source = `sqlite:${fresh("source.db")}`;
    await populated(source, ["ann"]);
    const missing = join(dir, "no-such-folder", "svc.db");
    const reply = await cli("copy", "--from", source, "--to", `sqlite:${missing}`);
    expect(reply).toEqual({
      code: 1,
      err: `svc copy: nothing copied: no database at ${missing}: make it first with \`svc migrate\` (SVC_DATABASE_URL=the target)\n`,
    });
    expect(existsSync(join(dir, "no-such-folder"))).toBe(false);
  });

  test.skipIf(!pgAvailable)(
    "a PostgreSQL target without svc's tables is refused, and stays without them; svc migrate makes them",
    async () => {
      const source = `sqlite:${fresh("source.db")}`;
      await populated(source, ["ann"]);
      const target = await createTestDatabase("copy_bare_target");
      try {
        const reply = await cli("copy", "--from", source, "--to", target.url);
        expect(reply.code).toBe(1);
        expect(reply.err).toEndWith(
          "is not an svc database (it has no svc tables): make it first with `svc migrate` (SVC_DATABASE_URL=the target)\n",
        );
        const db = new SQL({ url: target.url, max: 1 });
        const [row] =
          await db`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema IN ('public', 'drizzle')`;
        await db.close();
        expect(row.n).toBe(0);
        const migrate = await captureCli(["migrate"], { SVC_DATABASE_URL: target.url });
        expect(migrate.code).toBe(0);
        expect((await cli("copy", "--from", source, "--to", target.url)).code).toBe(0);
        expect(await counts(target.url)).toEqual({ users: 1, categories: 1 });
      } finally {
        await target.drop();
      }
    },
  );
});

describe.each(TARGETS)("svc copy to $name: the database's identity", (target) => {
  test.skipIf(target.skip)(
    "the copy takes the source's identity (its backups are the same database's) and a new epoch (cursors RESYNC)",
    async () => {
      const source = `sqlite:${fresh("source.db")}`;
      await populated(source, ["dan"]);
      const { url, drop } = await target.make();
      try {
        const identities = async (of: string) => {
          const store = await openStore(parseDatabaseUrl(of, {}, "url"));
          try {
            return { id: await store.categoryEvents.identity(), epoch: await store.categoryEvents.epoch() };
          } finally {
            await store.close();
          }
        };
        const from = await identities(source);
        const before = await identities(url);
        expect(before.id).not.toBe(from.id);
        expect((await cli("copy", "--from", source, "--to", url, "--force")).code).toBe(0);
        const after = await identities(url);
        expect(after.id).toBe(from.id);
        expect(after.epoch).not.toBe(from.epoch);
        expect(after.epoch).not.toBe(before.epoch);
      } finally {
        await drop();
      }
    },
  );
});
