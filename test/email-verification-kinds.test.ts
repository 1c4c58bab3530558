// A token of another kind (a password reset's, an e-mail change's) sent to auth/email/verify is refused as
// invalid_mail_token and changes nothing. svc's own flows issue those kinds elsewhere, so the row is written
// straight into account_tokens, on a SQLite file and on PostgreSQL, beside a store serving the app.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { describe, expect, test } from "bun:test";
import { linkTokenDigest as mailTokenDigest, newLinkToken as newMailToken } from "../src/users/link-tokens.ts";
import { parseConfig } from "../src/config/index.ts";
import { openStore } from "../src/db/open.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { expectProblem, testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable } from "./postgres.ts";
import { freshDatabase } from "./support/admin-cli.ts";
import { VERIFY } from "./support/verification.ts";

const postgres = await postgresAvailable();

type Insert = (row: [digest: string, kind: string, userId: string, email: string]) => Promise<void>;

async function refusesOtherKinds(store: VersionedStore, insert: Insert) {
  const app = await testApp({ on: store });
  const ann = await app.signUp("ann");
  const before = await store.users.findById(ann.user.id);
  for (const kind of ["password_reset", "email_change"]) {
    const token = newMailToken();
    await insert([mailTokenDigest(token), kind, ann.user.id, ann.user.email]);
    expectProblem(await app.call("POST", VERIFY, { body: { token } }), 400, "invalid_mail_token");
  }
  expect(await store.users.findById(ann.user.id)).toEqual(before);
  expect(await store.audit.list({ action: "email_verification.redeemed", limit: 10 })).toEqual([]);
}

const row = ([digest, kind, userId, email]: Parameters<Insert>[0]) => {
  const now = Date.now();
  return [digest, kind, userId, email, new Date(now).toISOString(), new Date(now + 3600_000).toISOString()];
};
const INSERT =
  "insert into account_tokens (digest, kind, user_id, email, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)";

describe("a token of another kind at auth/email/verify", () => {
  test("on SQLite: 400 invalid_mail_token, nothing changed", async () => {
    const url = await freshDatabase();
    const store = await openStore(parseConfig({ SVC_DATABASE_URL: url }).database);
    const raw = new Database(url.slice("sqlite:".length));
    try {
      await refusesOtherKinds(store, async (values) => {
        raw.query(INSERT.replace(/\$\d/g, "?")).run(...row(values));
      });
    } finally {
      raw.close();
      await store.close();
    }
  });

  test.skipIf(!postgres)("on PostgreSQL: 400 invalid_mail_token, nothing changed", async () => {
    const database = await createTestDatabase("kinds");
    const store = await openStore(parseConfig({ SVC_DATABASE_URL: database.url }).database);
    const raw = new SQL({ url: database.url, max: 1 });
    try {
      await refusesOtherKinds(store, async (values) => {
        await raw.unsafe(INSERT, row(values));
      });
    } finally {
      await raw.close();
      await store.close();
      await database.drop();
    }
  });
});
