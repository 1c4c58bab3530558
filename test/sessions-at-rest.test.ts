// What the database holds of sessions: refresh tokens only as digests, answers only sealed; and the
// background pruning that forgets expired sessions in bounded batches.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { auditEvent, CLI_ORIGIN } from "../src/audit/model.ts";
import { pruneExpired, startPruning, storeJobs } from "../src/process/pruning.ts";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { SessionStore, VersionedStore } from "../src/db/store.ts";
import { createLoggers } from "../src/observability/log.ts";
import { testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable, postgresConfig } from "./postgres.ts";

/** The event log's defaults. */
const EVENTS = { kept: 10_000, keptForSeconds: 86_400 };

const onPostgres = await postgresAvailable();

/** Signs up, logs in and refreshes twice (once repeated), returning every token handed out. */
async function handOut(store: VersionedStore): Promise<string[]> {
  const app = await testApp({ on: store });
  const { token, refresh } = await app.signUp("ann");
  const first = (await app.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } })).body;
  await app.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } });
  const second = (await app.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: first.refresh_token } }))
    .body;
  return [token, refresh, first.token, first.refresh_token, second.token, second.refresh_token];
}

describe("at rest", () => {
  test("SQLite: no refresh or access token appears anywhere in the database files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-at-rest-"));
    try {
      const store = openSqliteStore(join(dir, "svc.db"));
      const tokens = await handOut(store);
      const files = readdirSync(dir).map((name) => readFileSync(join(dir, name)).toString("latin1"));
      await store.close();
      // The search finds what is there in clear: the account's e-mail.
      expect(files.some((file) => file.includes("ann@example.com"))).toBe(true);
      for (const token of tokens) expect(files.some((file) => file.includes(token))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.skipIf(!onPostgres)("PostgreSQL: no token appears in any session or refresh token row", async () => {
    const database = await createTestDatabase("at_rest");
    const store = await openPostgresStore(postgresConfig(database.url));
    try {
      const tokens = await handOut(store);
      const sql = new SQL({ url: database.url, max: 1 });
      const rows = await sql`select row_to_json(r)::text as row from refresh_tokens r
                             union all select row_to_json(s)::text from sessions s`;
      await sql.close();
      expect(rows.length).toBeGreaterThanOrEqual(4);
      const text = rows.map((r: { row: string }) => r.row).join("\n");
      for (const token of tokens) expect(text).not.toContain(token);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

describe("pruning", () => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const future = new Date(Date.now() + 3_600_000).toISOString();

  async function withSessions(expired: number, live: number) {
    const store = openSqliteStore(":memory:");
    const user = await store.users.create({
      id: Bun.randomUUIDv7(),
      username: "ann",
      email: "ann@example.com",
      passwordHash: "h",
      createdAt: new Date().toISOString(),
    });
    const start = (expiresAt: string) =>
      store.sessions.start(
        {
          id: Bun.randomUUIDv7(),
          userId: user.id,
          createdAt: past,
          lastUsedAt: past,
          expiresAt,
          userAgent: null,
          clientAddress: null,
          amr: "pwd",
          mfaAt: null,
        },
        { digest: Bun.randomUUIDv7(), expiresAt },
        { tokenVersion: 0 },
      );
    for (let i = 0; i < expired; i++) await start(past);
    for (let i = 0; i < live; i++) await start(future);
    return { store, user };
  }

  test("deletes every expired session in batches of at most the limit, and nothing live", async () => {
    const { store, user } = await withSessions(1200, 3);
    const limits: number[] = [];
    const sessions: SessionStore = {
      ...store.sessions,
      prune: (now, limit) => {
        limits.push(limit);
        return store.sessions.prune(now, limit);
      },
    };
    const jobs = storeJobs({ ...store, sessions }, 90 * 86400, EVENTS);
    expect(await pruneExpired({ jobs, batch: 500 })).toBe(1200);
    expect(limits).toEqual([500, 500, 500]);
    expect(await store.sessions.list(user.id, new Date().toISOString())).toHaveLength(3);
    expect((await store.sessions.page(10_000)).sessions).toHaveLength(3);
    await store.close();
  });

  test("runs at start and on its interval; a failing round is logged and the next one runs; stop waits", async () => {
    const { store } = await withSessions(5, 1);
    const lines: string[] = [];
    const { logger } = createLoggers("debug", { write: (line: string) => void lines.push(line) });
    let calls = 0;
    const stop = startPruning({
      jobs: [
        {
          what: "sessions",
          prune: async (now, limit) => {
            calls++;
            if (calls === 2) throw new Error("the database hiccupped");
            return store.sessions.prune(new Date(now).toISOString(), limit);
          },
        },
      ],
      logger,
      everyMs: 30,
    });
    await Bun.sleep(120);
    await stop();
    const after = calls;
    await Bun.sleep(60);
    expect(calls).toBe(after);
    expect(calls).toBeGreaterThanOrEqual(3);
    expect((await store.sessions.page(100)).sessions).toHaveLength(1);
    expect(lines.some((line) => line.includes("pruning expired rows failed"))).toBe(true);
    await store.close();
  });
});

describe("the pruner's jobs", () => {
  test("also forget expired reset codes and audit events older than SVC_AUDIT_RETENTION, and nothing else", async () => {
    const store = openSqliteStore(":memory:");
    const day = 86_400_000;
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const user = await store.users.create({
      id: Bun.randomUUIDv7(),
      username: "ann",
      email: "ann@example.com",
      passwordHash: "h",
      createdAt: iso(now - 100 * day),
    });
    const event = (at: number) => auditEvent("login.failed", { target: user.id, origin: CLI_ORIGIN }, iso(at));
    const old = event(now - 91 * day);
    const kept = event(now - 89 * day);
    for (const e of [old, kept]) await store.audit.record(e);
    const bob = await store.users.create({
      id: Bun.randomUUIDv7(),
      username: "bob",
      email: "bob@example.com",
      passwordHash: "h",
      createdAt: iso(now),
    });
    const reset = (userId: string, digest: string, expiresAt: number) =>
      store.resets.issue(
        { digest, userId, createdAt: iso(now - 2 * 3600_000), expiresAt: iso(expiresAt), issuedBy: null },
        event(now),
      );
    await reset(user.id, "expired", now - 1000);
    await reset(bob.id, "live", now + 3600_000);
    // Two events from issuing above, plus the one kept.
    expect(await pruneExpired({ jobs: storeJobs(store, 90 * 86400, EVENTS), now: () => now })).toBe(2);
    expect((await store.audit.list({ limit: 10 })).map((e) => e.id)).not.toContain(old.id);
    expect((await store.audit.list({ limit: 10 })).map((e) => e.id)).toContain(kept.id);
    const redemption = {
      passwordHash: "h2",
      at: iso(now),
      session: {
        id: Bun.randomUUIDv7(),
        userId: bob.id,
        createdAt: iso(now),
        lastUsedAt: iso(now),
        expiresAt: iso(now + day),
        userAgent: null,
        clientAddress: null,
        amr: "pwd",
        mfaAt: null,
      },
      refresh: { digest: "r", expiresAt: iso(now + day) },
    };
    expect(typeof (await store.resets.redeem("live", bob.id, redemption, event(now)))).toBe("object");
    await store.close();
  });
});
