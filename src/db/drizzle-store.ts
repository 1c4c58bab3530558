// The storage contract, written once in Drizzle for every database svc supports. What differs between
// them (opening, migrating, transactions, reading driver errors) comes in with the Dialect.
import { and, count, eq, gt, isNull, ne, or, sql, type Column, type SQL } from "drizzle-orm";
import { AppError, type ErrorCode } from "../errors.ts";
import { parseId } from "../ids.ts";
import { chunks } from "./chunks.ts";
import { first, columns } from "./rows.ts";
import { ROLL_BACK, TIMED, undoable } from "./transactions.ts";
import { auditStore, recordIn } from "./audit.ts";
import { categoryStore } from "./categories.ts";
import { inScope, renewSession, sessionStore } from "./sessions.ts";
import { idempotencyStore } from "./idempotency.ts";
import { resetStore } from "./resets.ts";
import { throttleStore } from "./throttle.ts";
import { revocationStore, tokenReads } from "./tokens.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import {
  type RecordState,
  type UserRecord,
  LoadRefused,
  nameKey,
  USER_FIELDS,
  type Counts,
  type LoadData,
  type LoadOptions,
  type UserStore,
  type VersionedStore,
} from "./store.ts";

/** Rows per insert statement of a bulk load: within every database's limit on bound parameters. */
const LOAD_BATCH = 500;

const userClash = (detail: string): ErrorCode => (detail.includes("email") ? "email_taken" : "username_taken");
export function drizzleStore(dialect: Dialect): VersionedStore {
  const { db, run } = dialect;
  const users = userStore(dialect);
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

/** Whether the record still holds what a client saw (If-Match). */
function sameState(user: UserRecord, seen: RecordState & Pick<UserRecord, "lastLoginAt">): boolean {
  return (
    user.username === seen.username &&
    user.email === seen.email &&
    user.role === seen.role &&
    user.status === seen.status &&
    user.updatedAt === seen.updatedAt &&
    user.lastLoginAt === seen.lastLoginAt
  );
}

/** What every change that may take an admin away serializes on, across instances. */
const ADMINS = "svc:active-admins";

/**
 * Throws `last_admin` when `target`, an active admin, would stop being one (`after` null: deleted)
 * and no other active admin remains. Run after serializing on ADMINS, so no concurrent change can
 * take the other admins away between this check and the commit.
 */
async function keepAnAdmin(
  tx: Db,
  { users }: Tables,
  target: UserRecord,
  after: Pick<UserRecord, "role" | "status"> | null,
): Promise<void> {
  const isAdmin = (user: Pick<UserRecord, "role" | "status">) => user.role === "admin" && user.status === "active";
  if (!isAdmin(target) || (after && isAdmin(after))) return;
  const [others] = await tx
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, "admin"), eq(users.status, "active"), ne(users.id, target.id)));
  if (others!.n === 0) {
    throw new AppError(
      "last_admin",
      "This is the last active administrator: promote another account before demoting, disabling or deleting it.",
    );
  }
}

/** A LIKE pattern matching text that starts with `prefix` (with `\` as the escape character). */
function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function userStore({ db, run, tables, transaction, serialize }: Dialect): UserStore {
  const { users, sessions } = tables;
  const userColumns = columns(users, USER_FIELDS);
  const p = sql.placeholder;
  /** The user whose `column` holds the value given as `name`. */
  const byColumn = (column: Column, name: string) =>
    db
      .select(userColumns)
      .from(users)
      .where(eq(column, p(name)))
      .prepare(`user_by_${name}`);
  const byId = byColumn(users.id, "id");
  const byUsername = byColumn(users.usernameKey, "key");
  const byEmail = byColumn(users.email, "email");
  const firstPage = db.select(userColumns).from(users).orderBy(users.id).limit(p("limit")).prepare("users_first");
  const nextPage = db
    .select(userColumns)
    .from(users)
    .where(gt(users.id, p("after")))
    .orderBy(users.id)
    .limit(p("limit"))
    .prepare("users_after");

  /** The user's row while it still holds what a client saw. */
  const still = (state: RecordState & { lastLoginAt?: string | null }) =>
    and(
      eq(users.username, state.username),
      eq(users.email, state.email),
      eq(users.role, state.role),
      eq(users.status, state.status),
      eq(users.updatedAt, state.updatedAt),
      ...(state.lastLoginAt === undefined
        ? []
        : [state.lastLoginAt === null ? isNull(users.lastLoginAt) : eq(users.lastLoginAt, state.lastLoginAt)]),
    )!;
  /** The user with this id, and with a token version, only while it is still that one. */
  const heldAt = (id: string, tokenVersion: number | undefined) =>
    tokenVersion === undefined ? eq(users.id, id) : and(eq(users.id, id), eq(users.tokenVersion, tokenVersion));
  const insertable = (user: Parameters<UserStore["create"]>[0]) => ({
    ...user,
    usernameKey: nameKey(user.username),
    updatedAt: user.createdAt,
  });

  return {
    create: (user, audit) =>
      audit
        ? transaction(
            async (tx) => {
              const [created] = await tx.insert(users).values(insertable(user)).returning(userColumns);
              await recordIn(tx, tables, { ...audit, targetId: created!.id });
              return created!;
            },
            { timed: true, clash: userClash },
          )
        : run(async () => (await db.insert(users).values(insertable(user)).returning(userColumns))[0]!, userClash),
    findById(id) {
      const key = parseId(id);
      return key ? run(async () => first(await byId.execute({ id: key }))) : Promise.resolve(null);
    },
    findByLogin: (login) =>
      run(async () =>
        first(
          login.includes("@")
            ? await byEmail.execute({ email: login.toLowerCase() })
            : await byUsername.execute({ key: nameKey(login) }),
        ),
      ),
    list: ({ limit, after }) =>
      run(() => (after === undefined ? firstPage.execute({ limit }) : nextPage.execute({ after, limit }))),
    search: ({ search, role, status, limit, after }) =>
      run(async () => {
        const conditions: SQL[] = [];
        if (search !== undefined && search !== "") {
          const pattern = prefixPattern(nameKey(search));
          conditions.push(
            or(sql`${users.usernameKey} like ${pattern} escape '\\'`, sql`${users.email} like ${pattern} escape '\\'`)!,
          );
        }
        if (role) conditions.push(eq(users.role, role));
        if (status) conditions.push(eq(users.status, status));
        const from = after === undefined ? undefined : parseId(after);
        if (from) conditions.push(gt(users.id, from));
        return db
          .select(userColumns)
          .from(users)
          .where(and(...conditions))
          .orderBy(users.id)
          .limit(limit);
      }),
    activeAdmins: () =>
      run(async () => {
        const [row] = await db
          .select({ n: count() })
          .from(users)
          .where(and(eq(users.role, "admin"), eq(users.status, "active")));
        return row!.n;
      }),
    administer(id, change, updatedAt, audit, unchanged) {
      const key = parseId(id);
      if (!key) return Promise.resolve(null);
      return transaction(async (tx) => {
        await serialize(tx, ADMINS);
        const target = first(await tx.select(userColumns).from(users).where(eq(users.id, key)));
        if (!target) return null;
        if (unchanged && !sameState(target, unchanged)) return "changed" as const;
        const next = { role: change.role ?? target.role, status: change.status ?? target.status };
        if (next.role === target.role && next.status === target.status) return target;
        await keepAnAdmin(tx, tables, target, next);
        // Disabling revokes at once: every token (by its version) and every session.
        const disabling = next.status === "disabled" && target.status === "active";
        // Conditional again in the write: a user's own change is not serialized with an administrator's.
        const [updated] = await tx
          .update(users)
          .set({ ...next, updatedAt, ...(disabling && { tokenVersion: sql`${users.tokenVersion} + 1` }) })
          .where(unchanged ? and(eq(users.id, key), still(unchanged)) : eq(users.id, key))
          .returning(userColumns);
        if (!updated) return "changed" as const;
        if (disabling) await tx.delete(sessions).where(eq(sessions.userId, key));
        await recordIn(tx, tables, audit);
        return updated;
      }, TIMED);
    },
    update(id, patch, updatedAt, tokenVersion, unchanged) {
      const key = parseId(id);
      if (!key) return Promise.resolve(null);
      const changes = {
        ...patch,
        ...(patch.username !== undefined && { usernameKey: nameKey(patch.username) }),
        updatedAt,
      };
      const where = unchanged ? and(heldAt(key, tokenVersion), still(unchanged)) : heldAt(key, tokenVersion);
      return run(async () => first(await db.update(users).set(changes).where(where).returning(userColumns)), userClash);
    },
    async setPassword(id, passwordHash, updatedAt, tokenVersion, keep, audit) {
      const key = parseId(id);
      if (!key) return null;
      const changes = { passwordHash, updatedAt, tokenVersion: sql`${users.tokenVersion} + 1` };
      return undoable(
        transaction,
        async (tx) => {
          // The user's row first, then sessions: the order a deletion takes them in (see rotate).
          const user = first(
            await tx.update(users).set(changes).where(heldAt(key, tokenVersion)).returning(userColumns),
          );
          if (!user) return null;
          // If the kept session ended meanwhile (another instance's logout), nothing here lands.
          if (keep && !(await renewSession(tx, tables, key, keep.sessionId, keep.refresh, updatedAt))) throw ROLL_BACK;
          await tx.delete(tables.sessions).where(inScope(tables, key, keep ? { except: keep.sessionId } : "all")!);
          await recordIn(tx, tables, audit);
          return user;
        },
        null,
      );
    },
    delete(id, tokenVersion, audit) {
      const key = parseId(id);
      if (!key) return Promise.resolve(false);
      return transaction(async (tx) => {
        await serialize(tx, ADMINS);
        const target = first(await tx.select(userColumns).from(users).where(heldAt(key, tokenVersion)));
        if (!target) return false;
        await keepAnAdmin(tx, tables, target, null);
        const gone = await tx.delete(users).where(heldAt(key, tokenVersion)).returning({ id: users.id });
        if (gone.length === 0) return false;
        await recordIn(tx, tables, audit);
        return true;
      }, TIMED);
    },
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
