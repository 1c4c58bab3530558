// `svc copy` carries the mail outbox (pending mails go out from the target) and the one-time tokens the
// mails carry, so a verification or reset link sent before the move still works after it.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDatabaseUrl } from "../../src/config/index.ts";
import { openStore } from "../../src/db/open.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { testApp, testConfig } from "../helpers.ts";
import { createTestDatabase, postgresAvailable } from "../postgres.ts";
import { captureCli } from "../support/cli.ts";

const pgAvailable = await postgresAvailable();
const dir = mkdtempSync(join(tmpdir(), "svc-mail-copy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const composer = createComposer({
  productName: "svc",
  publicUrl: "https://svc.example.com",
  secret: testConfig().jwt.secret,
});

const open = (url: string) => openStore(parseDatabaseUrl(url, {}, "url"));

async function source(path: string) {
  const store = await open(`sqlite:${path}`);
  // Verification off: the outbox holds exactly the two mails below.
  const app = await testApp({ on: store, config: { mail: { ...testConfig().mail, verification: "off" } } });
  const ann = await app.signUp("ann");
  const mails = ["one", "two"].map((n) =>
    composer.compose("verify_email", { address: "ann@example.com", userId: ann.user.id }, { username: n }),
  );
  await store.mail.enqueue(mails);
  await store.mail.markSent(mails[0]!.id, new Date().toISOString());
  await store.close();
  const db = new Database(path);
  db.run(
    "insert into account_tokens (digest, kind, user_id, email, created_at, expires_at) values (?, 'email_verification', ?, 'ann@example.com', ?, ?)",
    ["d".repeat(64), ann.user.id, new Date().toISOString(), new Date(Date.now() + 86_400_000).toISOString()],
  );
  db.close();
  return mails;
}

const targets = [
  {
    name: "sqlite",
    skip: false,
    make: async () => ({ url: `sqlite:${join(dir, "target.db")}`, drop: async () => {} }),
  },
  {
    name: "postgres",
    skip: !pgAvailable,
    make: async () => {
      const database = await createTestDatabase("mailcopy");
      return { url: database.url, drop: () => database.drop() };
    },
  },
];

describe.each(targets)("svc copy to $name", (target) => {
  test.skipIf(target.skip)("carries the outbox as it is, and the mails' tokens", async () => {
    const from = join(dir, `source-${target.name}.db`);
    const mails = await source(from);
    const { url, drop } = await target.make();
    try {
      (await open(url)).close();
      const copied = await captureCli(["copy", "--from", `sqlite:${from}`, "--to", url]);
      expect(copied.code).toBe(0);
      expect(copied.err).toContain("counts match the source");
      const [before, after] = [await open(`sqlite:${from}`), await open(url)];
      try {
        expect(await after.mail.page(10)).toEqual(await before.mail.page(10));
        expect((await after.mail.page(10)).map((m) => [m.id, m.status])).toEqual([
          [mails[0]!.id, "sent"],
          [mails[1]!.id, "pending"],
        ]);
        expect(await after.mail.tokenPage(10)).toEqual(await before.mail.tokenPage(10));
        expect(await after.mail.tokenPage(10)).toHaveLength(1);
      } finally {
        await before.close();
        await after.close();
      }
      // Copied again with --force, the target's rows are replaced, not doubled.
      const again = await captureCli(["copy", "--from", `sqlite:${from}`, "--to", url, "--force"]);
      expect(again.code).toBe(0);
      const replaced = await open(url);
      try {
        expect(await replaced.mail.page(10)).toHaveLength(2);
        expect(await replaced.mail.tokenPage(10)).toHaveLength(1);
      } finally {
        await replaced.close();
      }
    } finally {
      await drop();
    }
  });
});
