// `svc copy` carries second factors: the authenticator app (its sealed secret and last step), the recovery
// codes and the passkeys. A copy that dropped them would leave those accounts with a password alone.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TOTP, URI } from "otpauth";
import { parseDatabaseUrl } from "../src/config/index.ts";
import { openStore } from "../src/db/open.ts";
import { testApp } from "./helpers.ts";
import { captureCli } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-copy-mfa-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the app, the recovery codes and the passkeys arrive; the copy's login asks for the code, which works", async () => {
  const from = `sqlite:${join(dir, "source.db")}`;
  const to = `sqlite:${join(dir, "target.db")}`;
  const source = await openStore(parseDatabaseUrl(from, {}, "url"));
  const app = await testApp({ on: source });
  const ann = await app.signUp("ann");
  const enrolment = await app.call("POST", "/svc-api/v1/auth/mfa/totp", { token: ann.token });
  const totp = URI.parse(enrolment.body.otpauth_uri) as TOTP;
  const confirmed = await app.call("POST", "/svc-api/v1/auth/mfa/totp/confirm", {
    token: ann.token,
    body: { code: totp.generate({ timestamp: Date.now() - 30_000 }) },
  });
  expect(confirmed.status).toBe(200);
  // A passkey row as the passkey code writes it.
  const { Database } = await import("bun:sqlite");
  await source.close();
  const raw = new Database(join(dir, "source.db"));
  raw
    .query(
      "insert into passkeys (id, user_id, credential_id, public_key, counter, transports, device_type, backed_up, name, created_at) values (?, ?, 'cred-1', 'key-1', 3, 'internal', 'multiDevice', 1, 'Phone', ?)",
    )
    .run(Bun.randomUUIDv7(), ann.user.id, new Date().toISOString());
  raw.close();
  await (await openStore(parseDatabaseUrl(to, {}, "url"))).close();

  const copied = await captureCli(["copy", "--from", from, "--to", to]);
  expect(copied.code).toBe(0);
  expect(copied.err + copied.out).toContain(
    "second factors: 1 authenticator apps, 10 recovery codes, 1 passkeys; counts match the source",
  );

  const before = await openStore(parseDatabaseUrl(from, {}, "url"), { existing: true });
  const after = await openStore(parseDatabaseUrl(to, {}, "url"), { existing: true });
  try {
    expect(await after.mfa.totpPage(10)).toEqual(await before.mfa.totpPage(10));
    expect(await after.mfa.recoveryCodePage(20)).toEqual(await before.mfa.recoveryCodePage(20));
    expect(await after.mfa.recoveryCodePage(20)).toHaveLength(10);
    expect(await after.mfa.passkeyPage(10)).toEqual(await before.mfa.passkeyPage(10));
    expect(await after.mfa.passkeyPage(10)).toHaveLength(1);
    const target = await testApp({ on: after });
    const login = await target.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: ann.password },
    });
    expect(login.body.mfa_required).toBe(true);
    const done = await target.call("POST", "/svc-api/v1/auth/mfa/verify", {
      body: { mfa_token: login.body.mfa_token, code: totp.generate({ timestamp: Date.now() + 30_000 }) },
    });
    expect(done.status).toBe(200);
  } finally {
    await before.close();
    await after.close();
  }
});
