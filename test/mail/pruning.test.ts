// The background pruning forgets sent mails once SVC_MAIL_KEEP has passed since they were sent; pending and
// failed mails stay (a failed one until an administrator resends it).
import { expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { pruneExpired, storeJobs } from "../../src/process/pruning.ts";
import { testConfig } from "../helpers.ts";

test("sent mails older than SVC_MAIL_KEEP are pruned; pending, failed and recent ones stay", async () => {
  const store = openSqliteStore(":memory:");
  const start = Date.parse("2026-05-01T00:00:00.000Z");
  const composer = createComposer(
    { productName: "svc", publicUrl: "https://svc.example.com", secret: testConfig().jwt.secret },
    () => start,
  );
  const [old, recent, pending, failed] = ["a", "b", "c", "d"].map((n) =>
    composer.compose("password_changed", { address: `${n}@example.com`, userId: null }, { username: n }),
  );
  await store.mail.enqueue([old!, recent!, pending!, failed!]);
  const day = 86_400_000;
  await store.mail.markSent(old!.id, new Date(start).toISOString());
  await store.mail.markSent(recent!.id, new Date(start + 2 * day).toISOString());
  await store.mail.markFailed(
    failed!.id,
    "550",
    auditEvent("mail.failed", { origin: { address: null, requestId: null } }),
  );
  const jobs = storeJobs(store, 90 * 86400, { kept: 1000, keptForSeconds: 86400 }, undefined, 2 * 86400);
  expect(await pruneExpired({ jobs, now: () => start + 2 * day + 1 })).toBe(1);
  const left = (await store.mail.list({ limit: 10 })).map((m) => m.id).sort();
  expect(left).toEqual([recent!.id, pending!.id, failed!.id].sort());
  await store.close();
});
