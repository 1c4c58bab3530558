// The background pruning and OpenID sign-ins: a mode=code sign-in's one-time code goes once expired,
// spent or not; one still within its minute stays.
import { expect, test } from "bun:test";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { pruneExpired, storeJobs } from "../src/process/pruning.ts";
import { newUser } from "./store/conformance/fixtures.ts";

test("expired one-time sign-in codes are pruned; live ones stay", async () => {
  const store = openSqliteStore(":memory:");
  try {
    const ann = await store.users.create(newUser("ann"));
    const iso = (ms: number) => new Date(ms).toISOString();
    const start = Date.parse("2026-05-01T12:00:00.000Z");
    const code = (digest: string, at: number) =>
      store.identities.issueCode({
        digest,
        userId: ann.id,
        amr: ["ext"],
        createdAt: iso(at),
        expiresAt: iso(at + 60_000),
      });
    await code("early", start);
    await code("spent", start);
    expect(await store.identities.takeCode("spent", iso(start + 1000))).not.toBeNull();
    await code("late", start + 50_000);
    const jobs = storeJobs(store, 90 * 86400, { kept: 1000, keptForSeconds: 86400 });

    expect(await pruneExpired({ jobs, now: () => start + 61_000 })).toBe(2);
    // The late one is still good, and is taken once.
    expect(await store.identities.takeCode("late", iso(start + 62_000))).toMatchObject({ userId: ann.id });
    expect(await store.identities.takeCode("early", iso(start + 62_000))).toBeNull();
    expect(await pruneExpired({ jobs, now: () => start + 111_000 })).toBe(1);
  } finally {
    await store.close();
  }
});
