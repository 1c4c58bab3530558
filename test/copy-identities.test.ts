// `svc copy` carries identities at OpenID providers, checked by their count as second factors are: a copy
// that dropped them would leave an account made through a provider with no way to sign in.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditEvent, CLI_ORIGIN } from "../src/audit/model.ts";
import { parseDatabaseUrl } from "../src/config/index.ts";
import { NO_PASSWORD } from "../src/db/records.ts";
import { openStore } from "../src/db/open.ts";
import { captureCli } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-copy-identities-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the identities arrive as they were, and the count is reported", async () => {
  const from = `sqlite:${join(dir, "source.db")}`;
  const to = `sqlite:${join(dir, "target.db")}`;
  const source = await openStore(parseDatabaseUrl(from, {}, "url"));
  const at = new Date().toISOString();
  const id = Bun.randomUUIDv7();
  const identity = {
    id: Bun.randomUUIDv7(),
    userId: id,
    provider: "corp",
    issuer: "https://idp.example.test",
    subject: "ann-sub",
    email: "ann@example.test",
    createdAt: at,
    lastUsedAt: null,
  };
  await source.users.create(
    { id, username: "ann", email: "ann@example.test", passwordHash: NO_PASSWORD, createdAt: at },
    auditEvent("user.created", { actor: id, target: id, origin: CLI_ORIGIN }, at),
    undefined,
    identity,
  );
  await source.close();
  await (await openStore(parseDatabaseUrl(to, {}, "url"))).close();

  const copied = await captureCli(["copy", "--from", from, "--to", to]);
  expect(copied.code).toBe(0);
  expect(copied.err + copied.out).toContain("identities at OpenID providers: 1; the count matches the source");

  const after = await openStore(parseDatabaseUrl(to, {}, "url"), { existing: true });
  try {
    expect(await after.identities.page(10)).toEqual([identity]);
    expect(await after.identities.find(identity.issuer, identity.subject)).toEqual(identity);
  } finally {
    await after.close();
  }
  // Again over the copy (--force): the target's identities are replaced, not doubled or refused.
  const again = await captureCli(["copy", "--from", from, "--to", to, "--force"]);
  expect(again.code).toBe(0);
  expect(again.err + again.out).toContain("identities at OpenID providers: 1; the count matches the source");
});
