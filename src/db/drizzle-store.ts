// The storage contract, written once in Drizzle for every database svc supports. What differs between
// them (opening, migrating, transactions, reading driver errors) comes in with the Dialect.
import { count, sql } from "drizzle-orm";
import { chunks } from "./chunks.ts";
import { userAdministration } from "./administration.ts";
import { auditStore } from "./audit.ts";
import { categoryStore } from "./categories.ts";
import { sessionStore } from "./sessions.ts";
import { idempotencyStore } from "./idempotency.ts";
import { resetStore } from "./resets.ts";
import { throttleStore } from "./throttle.ts";
import { revocationStore, tokenReads } from "./tokens.ts";
import { userStore, type UserStore } from "./users.ts";
import type { Db, Dialect } from "./dialect.ts";
import { nameKey } from "./records.ts";
import { LoadRefused, type Counts, type LoadData, type LoadOptions, type VersionedStore } from "./store.ts";

/** Rows per insert statement of a bulk load: within every database's limit on bound parameters. */
const LOAD_BATCH = 500;

export function drizzleStore(dialect: Dialect): VersionedStore {
  const { db, run } = dialect;
  const users: UserStore = { ...userStore(dialect), ...userAdministration(dialect) };
  const { tokenState, versions } = tokenReads(dialect);

  return {
    kind: dialect.kind,
    users,
    categories: categoryStore(dialect),
    throttle: throttleStore(dialect),
    revocations: revocationStore(dialect),
    sessions: sessionStore(dialect),
    resets: resetStore(dialect),
    audit: auditStore(dialect),
    idempotency: idempotencyStore(dialect),
    changes: { listen: dialect.feed.listen },
    async tokenHolder(userId, jti, sessionId) {
      const state = await tokenState(userId, jti, sessionId);
      const user = state && (await users.findById(userId));
      return user ? { user, revoked: state.revoked, expiresAt: state.expiresAt } : null;
    },
    tokenState,
    versions,
    ping: dialect.ping,
    storage: dialect.storage,
    pool: dialect.pool,
    counts: () => run(() => countsIn(db, dialect)),
    load: (data, options) => dialect.transaction((tx) => load(tx, dialect, data, options)),
    close: dialect.close,
  };
}

async function countsIn(db: Db, { tables }: Dialect): Promise<Counts> {
  const [users] = await db.select({ n: count() }).from(tables.users);
  const [categories] = await db.select({ n: count() }).from(tables.categories);
  return { users: users!.n, categories: categories!.n };
}

async function load(tx: Db, dialect: Dialect, data: LoadData, options: LoadOptions): Promise<Counts> {
  const { users, categories, loginThrottle, revokedTokens, sessions, refreshTokens, passwordResets, auditEvents } =
    dialect.tables;
  // A bulk load is not a stream of changes: PostgreSQL's trigger announces nothing for this transaction.
  if (dialect.kind === "postgres") await tx.execute(sql`select set_config('svc.bulk', 'on', true)`);
  const before = await countsIn(tx, dialect);
  if (!options.replace && (before.users > 0 || before.categories > 0)) {
    throw new LoadRefused(`the target already holds ${before.users} users and ${before.categories} categories`);
  }
  if (options.replace) {
    for (const table of [
      dialect.tables.idempotencyKeys,
      refreshTokens,
      sessions,
      passwordResets,
      auditEvents,
      categories,
      users,
      loginThrottle,
      revokedTokens,
    ])
      await tx.delete(table);
  }
  const loaded = { users: 0, categories: 0 };
  for await (const batch of data.users) {
    for (const part of chunks(batch, LOAD_BATCH)) {
      await tx.insert(users).values(part.map((user) => ({ ...user, usernameKey: nameKey(user.username) })));
    }
    loaded.users += batch.length;
    options.onProgress?.({ ...loaded });
  }
  for (const part of chunks(data.categories, LOAD_BATCH)) {
    await tx.insert(categories).values(part.map((category) => ({ ...category, nameKey: nameKey(category.name) })));
    loaded.categories += part.length;
    options.onProgress?.({ ...loaded });
  }
  for await (const batch of data.sessions ?? []) {
    for (const part of chunks(batch.sessions, LOAD_BATCH)) await tx.insert(sessions).values(part);
    for (const part of chunks(batch.refreshTokens, LOAD_BATCH)) await tx.insert(refreshTokens).values(part);
  }
  for await (const batch of data.audit ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(auditEvents).values(part);
  }
  const after = await countsIn(tx, dialect);
  if (after.users !== options.expect.users || after.categories !== options.expect.categories) {
    throw new LoadRefused(
      `counts after loading (${JSON.stringify(after)}) differ from the source (${JSON.stringify(options.expect)})`,
    );
  }
  return after;
}
