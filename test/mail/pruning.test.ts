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

test("expired reset and e-mail change tokens are pruned with the verification tokens; live ones stay", async () => {
  const store = openSqliteStore(":memory:");
  const start = Date.parse("2026-05-01T00:00:00.000Z");
  const composer = createComposer(
    { productName: "svc", publicUrl: "https://svc.example.com", secret: testConfig().jwt.secret },
    () => start,
  );
  const iso = (ms: number) => new Date(ms).toISOString();
  const ann = await store.users.create({
    id: Bun.randomUUIDv7(),
    username: "ann",
    email: "ann@example.com",
    passwordHash: "hash",
    createdAt: iso(start),
  });
  const origin = { address: null, requestId: null };
  /** A token of this kind for ann, written as its store writes it, expiring `ttlMs` after the start. */
  const write = async (kind: "password_reset" | "email_change" | "email_verification", ttlMs: number) => {
    const digest = `digest-${Bun.randomUUIDv7()}`;
    const token = { digest, userId: ann.id, email: ann.email, createdAt: iso(start), expiresAt: iso(start + ttlMs) };
    const mail = composer.compose("password_changed", { address: ann.email, userId: ann.id }, { username: "ann" });
    const audit = auditEvent("email_change.requested", { target: ann.id, origin });
    if (kind === "password_reset") await store.mailedResets.request({ ...token, kind }, mail, audit, true);
    if (kind === "email_change") await store.emailChanges.request({ ...token, kind }, mail, audit);
    if (kind === "email_verification") await store.emailVerifications.issue({ token, mail, audit });
    return digest;
  };
  const at = iso(start + 3 * 3600_000);
  const notice = () =>
    composer.compose("password_changed", { address: ann.email, userId: ann.id }, { username: "ann" });
  const change = (digest: string) =>
    store.emailChanges.confirm(digest, at, notice, auditEvent("email_change.confirmed", { origin }));
  // Each kind keeps one token per user, so the expired ones are checked before the live ones replace them.
  const expiredReset = await write("password_reset", 60_000);
  const expiredChange = await write("email_change", 60_000);
  const expiredVerification = await write("email_verification", 60_000);
  const jobs = storeJobs(store, 90 * 86400, { kept: 1000, keptForSeconds: 86400 });
  expect(await pruneExpired({ jobs, now: () => Date.parse(at) })).toBe(3);
  // Gone, not merely expired: the store no longer knows them.
  expect(await store.mailedResets.find(expiredReset, at)).toBe("invalid");
  expect(await change(expiredChange)).toBe("invalid");
  const redeemed = auditEvent("email_verification.redeemed", { origin });
  expect(await store.emailVerifications.redeem(expiredVerification, at, redeemed)).toBe("invalid");
  const liveReset = await write("password_reset", 86_400_000);
  const liveChange = await write("email_change", 86_400_000);
  expect(await pruneExpired({ jobs, now: () => Date.parse(at) })).toBe(0);
  expect(await store.mailedResets.find(liveReset, at)).toMatchObject({ digest: liveReset });
  expect(await change(liveChange)).toMatchObject({ id: ann.id });
  await store.close();
});
