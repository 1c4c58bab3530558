// The background pruning and second factors: a login's second step is kept an hour past its expiry, so a late
// answer is told that it expired (mfa_token_expired) rather than that its token is unknown; WebAuthn challenges
// handed out and never answered (a sign-in's options need no token) go once expired.
import { expect, test } from "bun:test";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { pruneExpired, storeJobs } from "../src/process/pruning.ts";
import { newUser } from "./store/conformance/fixtures.ts";

test("expired second steps are pruned an hour after their expiry; expired WebAuthn challenges at once", async () => {
  const store = openSqliteStore(":memory:");
  try {
    const ann = await store.users.create(newUser("ann"));
    const expiry = Date.parse("2026-05-01T12:05:00.000Z");
    const iso = (ms: number) => new Date(ms).toISOString();
    const created = iso(expiry - 300_000);
    expect(
      await store.mfa.createChallenge({
        digest: "second-step",
        userId: ann.id,
        mode: "json",
        firstFactor: "pwd",
        webauthnChallenge: null,
        createdAt: created,
        expiresAt: iso(expiry),
      }),
    ).toBe(true);
    const challenge = "c".repeat(43);
    await store.passkeys.createChallenge({
      id: Bun.randomUUIDv7(),
      userId: null,
      purpose: "sign_in",
      challenge,
      createdAt: created,
      expiresAt: iso(expiry),
    });
    const jobs = storeJobs(store, 90 * 86400, { kept: 1000, keptForSeconds: 86400 });
    const pruneAt = (ms: number) => pruneExpired({ jobs, now: () => ms });

    await pruneAt(expiry + 10 * 60_000);
    expect(await store.mfa.challenge("second-step")).not.toBeNull();
    expect(await store.passkeys.takeChallenge(challenge, "sign_in", null, created)).toBeNull();

    await pruneAt(expiry + 61 * 60_000);
    expect(await store.mfa.challenge("second-step")).toBeNull();
  } finally {
    await store.close();
  }
});
