// The Store contract on PostgreSQL through Bun's SQL client and Drizzle. Every call has a deadline
// and translates driver errors at this edge: a unique violation becomes the contract's code, a
// database that does not answer becomes `database_unavailable` (503) within seconds.
import { SQL } from "bun";
import { count, eq, lt, sql } from "drizzle-orm";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import { redactUrl, type PostgresConfig } from "../../config.ts";
import { AppError, type ErrorCode } from "../../errors.ts";
import { parseId } from "../../ids.ts";
import { chunks } from "../chunks.ts";
import { heldAt } from "../conditions.ts";
import {
  CATEGORY_FIELDS,
  columns,
  LoadRefused,
  NoSuchDatabase,
  USER_FIELDS,
  nameKey,
  type CategoryPage,
  type CategoryRecord,
  type CategoryStore,
  type Counts,
  type OpenOptions,
  type Store,
  type ThrottleRecord,
  type ThrottleStore,
  type RevocationStore,
  type UserRecord,
  type UserStore,
} from "../store.ts";
import { storageMonitor, type StorageMonitor } from "../storage.ts";
import { migratePostgres } from "./migrate.ts";
import { categories, loginThrottle, revokedTokens, users } from "./schema.ts";

type Db = BunSQLDatabase;

const userColumns = columns(users, USER_FIELDS);
const categoryColumns = columns(categories, CATEGORY_FIELDS);

// The hot reads run as plain SQL through Bun's client (which prepares and caches each statement):
// Drizzle's generic row mapping and Date round trips cost more than the queries. PostgreSQL formats
// the timestamps as the contract's ISO strings itself.
const iso8601 = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const TABLE_VERSIONS_SQL = `(SELECT version FROM table_versions WHERE name = 'users') AS "usersVersion", (SELECT version FROM table_versions WHERE name = 'categories') AS "categoriesVersion"`;
const USER_SQL = `id, username, email, password_hash AS "passwordHash", token_version AS "tokenVersion", ${iso8601("created_at")} AS "createdAt", ${iso8601("updated_at")} AS "updatedAt"`;
const CATEGORY_SQL = `id, name, description, color_hex AS "colorHex", icon, created_by AS "createdBy", ${iso8601("created_at")} AS "createdAt", ${iso8601("updated_at")} AS "updatedAt"`;

type Row<T> = { [K in keyof T]: T[K] extends string ? (K extends `${string}At` ? Date : T[K]) : T[K] };

const iso = (d: Date) => d.toISOString();
const toUser = (r: Row<UserRecord>): UserRecord => ({ ...r, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) });
const toCategory = (r: Row<CategoryRecord>): CategoryRecord => ({
  ...r,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});
const toThrottle = (r: typeof loginThrottle.$inferSelect): ThrottleRecord => ({
  ...r,
  lastFailureAt: iso(r.lastFailureAt),
  blockedUntil: r.blockedUntil ? iso(r.blockedUntil) : null,
});

/** Connects, migrates under an advisory lock (with `existing`, only a database svc made), and returns the store. */
export async function openPostgresStore(
  config: PostgresConfig,
  { existing = false }: OpenOptions = {},
): Promise<Store> {
  const client = new SQL({
    url: config.url,
    max: config.poolMax,
    connectionTimeout: config.connectTimeoutS,
    idleTimeout: 60,
    connection: { statement_timeout: config.statementTimeoutMs, application_name: "svc" },
  });
  try {
    if (existing) {
      const [found] = (await client.unsafe(
        "SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS svc",
        [],
      )) as Array<{ svc: boolean }>;
      if (!found?.svc)
        throw new NoSuchDatabase(`${redactUrl(config.url)} is not an svc database (it has no svc tables)`);
    }
    await migratePostgres(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  const db = drizzle({ client });
  // The server cancels a statement at statement_timeout; this deadline also covers a server that
  // does not answer at all, and a pool waiting for a connection that will not come.
  const deadlineMs = config.statementTimeoutMs + config.connectTimeoutS * 1000;
  let busy = 0;
  const storage = storageMonitor();
  const guard = async <T>(
    work: () => Promise<T>,
    unique?: (constraint: string) => ErrorCode,
    deadline = deadlineMs,
  ) => {
    busy++;
    try {
      return await guarded(work, deadline, storage, unique);
    } finally {
      busy--;
    }
  };

  const counts = async (tx: Db = db): Promise<Counts> => ({
    users: (await tx.select({ n: count() }).from(users))[0]!.n,
    categories: (await tx.select({ n: count() }).from(categories))[0]!.n,
  });

  return {
    users: postgresUsers(db, client, guard),
    categories: postgresCategories(db, client, guard),
    throttle: postgresThrottle(db, guard),
    revocations: postgresRevocations(db, guard),
    storage: () => storage.state(),
    versions: () =>
      guard(async () => {
        const [row] = (await client.unsafe(`SELECT ${TABLE_VERSIONS_SQL}`, [])) as Array<{
          usersVersion: number;
          categoriesVersion: number;
        }>;
        return { users: row!.usersVersion, categories: row!.categoriesVersion };
      }),
    tokenHolder: (userId, jti) =>
      parseId(userId)
        ? guard(async () => {
            const [row] = (await client.unsafe(
              `SELECT ${USER_SQL}, EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = $1) AS revoked, ${TABLE_VERSIONS_SQL} FROM users WHERE id = $2`,
              [jti, userId],
            )) as Array<UserRecord & { revoked: boolean; usersVersion: number; categoriesVersion: number }>;
            if (!row) return null;
            const { revoked, usersVersion, categoriesVersion, ...user } = row;
            return { user, revoked, versions: { users: usersVersion, categories: categoriesVersion } };
          })
        : Promise.resolve(null),
    ping: (timeoutMs) =>
      guard(async () => void (await db.execute(sql`select 1`)), undefined, Math.min(timeoutMs, deadlineMs)),
    // Operations in flight, each holding (or waiting for) a connection.
    pool: () => ({ size: config.poolMax, busy: Math.min(busy, config.poolMax) }),
    counts: () => guard(() => counts()),
    async load(data, options) {
      // No deadline: a copy is as long as the data; the transaction keeps it all-or-nothing.
      return db.transaction(async (tx) => {
        const before = await counts(tx as unknown as Db);
        if (!options.replace && (before.users > 0 || before.categories > 0)) {
          throw new LoadRefused(`the target already holds ${before.users} users and ${before.categories} categories`);
        }
        if (options.replace)
          await tx.execute(sql`TRUNCATE ${categories}, ${users}, ${loginThrottle}, ${revokedTokens}`);
        const loaded = { users: 0, categories: 0 };
        for await (const batch of data.users) {
          for (const part of chunks(batch, 1000)) {
            await tx.insert(users).values(
              part.map((u) => ({
                ...u,
                usernameKey: nameKey(u.username),
                createdAt: new Date(u.createdAt),
                updatedAt: new Date(u.updatedAt),
              })),
            );
          }
          loaded.users += batch.length;
          options.onProgress?.({ ...loaded });
        }
        for (const part of chunks(data.categories, 1000)) {
          await tx.insert(categories).values(
            part.map((c) => ({
              ...c,
              nameKey: nameKey(c.name),
              createdAt: new Date(c.createdAt),
              updatedAt: new Date(c.updatedAt),
            })),
          );
          loaded.categories += part.length;
          options.onProgress?.({ ...loaded });
        }
        const after = await counts(tx as unknown as Db);
        if (after.users !== options.expect.users || after.categories !== options.expect.categories) {
          throw new LoadRefused(
            `counts after loading (${JSON.stringify(after)}) differ from the source (${JSON.stringify(options.expect)})`,
          );
        }
        return after;
      });
    },
    async close() {
      await client.close({ timeout: 5 });
    },
  };
}

type Guard = <T>(work: () => Promise<T>, unique?: (constraint: string) => ErrorCode, deadline?: number) => Promise<T>;

function postgresUsers(db: Db, client: SQL, guard: Guard): UserStore {
  const select = (where: string, params: unknown[]) =>
    client.unsafe(`SELECT ${USER_SQL} FROM users ${where}`, params) as Promise<UserRecord[]>;
  const clash = (constraint: string): ErrorCode => (constraint.includes("email") ? "email_taken" : "username_taken");
  const one = async (rows: Promise<Row<UserRecord>[]>) => {
    const [row] = await rows;
    return row ? toUser(row) : null;
  };
  return {
    create: (user) =>
      guard(async () => {
        const row = {
          ...user,
          usernameKey: nameKey(user.username),
          createdAt: new Date(user.createdAt),
          updatedAt: new Date(user.createdAt),
        };
        return (await one(db.insert(users).values(row).returning(userColumns)))!;
      }, clash),
    findById: (id) =>
      parseId(id) ? guard(async () => (await select("WHERE id = $1", [id]))[0] ?? null) : Promise.resolve(null),
    findByLogin: (login) =>
      guard(async () => {
        const [user] = login.includes("@")
          ? await select("WHERE email = $1", [login.toLowerCase()])
          : await select("WHERE username_key = $1", [nameKey(login)]);
        return user ?? null;
      }),
    list: ({ limit, after }) =>
      guard(() =>
        after === undefined
          ? select("ORDER BY id LIMIT $1", [limit])
          : select("WHERE id > $1 ORDER BY id LIMIT $2", [after, limit]),
      ),
    update: (id, patch, updatedAt, tokenVersion) =>
      guard(async () => {
        if (!parseId(id)) return null;
        const changes = {
          ...patch,
          ...(patch.username !== undefined && { usernameKey: nameKey(patch.username) }),
          updatedAt: new Date(updatedAt),
        };
        return one(
          db
            .update(users)
            .set(changes)
            .where(heldAt(users, id, tokenVersion))
            .returning(userColumns),
        );
      }, clash),
    setPassword: (id, passwordHash, updatedAt, tokenVersion) =>
      guard(async () => {
        if (!parseId(id)) return null;
        const changes = { passwordHash, updatedAt: new Date(updatedAt), tokenVersion: sql`${users.tokenVersion} + 1` };
        return one(
          db
            .update(users)
            .set(changes)
            .where(heldAt(users, id, tokenVersion))
            .returning(userColumns),
        );
      }),
    delete: (id, tokenVersion) =>
      guard(async () =>
        parseId(id)
          ? (
              await db
                .delete(users)
                .where(heldAt(users, id, tokenVersion))
                .returning({ id: users.id })
            ).length > 0
          : false,
      ),
  };
}

function postgresCategories(db: Db, client: SQL, guard: Guard): CategoryStore {
  const select = (rest: string, params: unknown[]) =>
    client.unsafe(`SELECT ${CATEGORY_SQL} FROM categories ${rest}`, params) as Promise<CategoryRecord[]>;
  const clash = (): ErrorCode => "category_name_taken";
  const one = async (rows: Promise<Row<CategoryRecord>[]>) => {
    const [row] = await rows;
    return row ? toCategory(row) : null;
  };
  return {
    // LIMIT NULL is no limit.
    list: ({ first = null, after }: CategoryPage = {}) =>
      guard(() =>
        after
          ? select("WHERE (name_key, id) > ($1, $2) ORDER BY name_key, id LIMIT $3", [
              nameKey(after.name),
              after.id,
              first,
            ])
          : select("ORDER BY name_key, id LIMIT $1", [first]),
      ),
    findById: (id) =>
      parseId(id) ? guard(async () => (await select("WHERE id = $1", [id]))[0] ?? null) : Promise.resolve(null),
    create: (category) =>
      guard(async () => {
        const row = {
          ...category,
          nameKey: nameKey(category.name),
          createdAt: new Date(category.createdAt),
          updatedAt: new Date(category.createdAt),
        };
        return (await one(db.insert(categories).values(row).returning(categoryColumns)))!;
      }, clash),
    update: (id, patch, updatedAt) =>
      guard(async () => {
        if (!parseId(id)) return null;
        const changes = {
          ...patch,
          ...(patch.name !== undefined && { nameKey: nameKey(patch.name) }),
          updatedAt: new Date(updatedAt),
        };
        return one(db.update(categories).set(changes).where(eq(categories.id, id)).returning(categoryColumns));
      }, clash),
    delete: (id) =>
      guard(async () =>
        parseId(id)
          ? (await db.delete(categories).where(eq(categories.id, id)).returning({ id: categories.id })).length > 0
          : false,
      ),
  };
}

function postgresRevocations(db: Db, guard: Guard): RevocationStore {
  return {
    revoke: (jti, expiresAt) =>
      guard(async () => {
        await db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, new Date()));
        await db
          .insert(revokedTokens)
          .values({ jti, expiresAt: new Date(expiresAt) })
          .onConflictDoNothing();
      }),
  };
}

/** Advisory locks of the throttle: this class, and the key's hash (two-int locks are a key space of their own). */
const THROTTLE_LOCK_CLASS = 0x737663;

function postgresThrottle(db: Db, guard: Guard): ThrottleStore {
  const read = async (tx: Db, key: string) => {
    const [row] = await tx.select().from(loginThrottle).where(eq(loginThrottle.key, key));
    return row ? toThrottle(row) : null;
  };
  return {
    get: (key) => guard(() => read(db, key)),
    transition: (key, step) =>
      guard(() =>
        db.transaction(async (transaction) => {
          const tx = transaction as unknown as Db;
          // Held until commit: every instance's transitions of this key run one after another. A lock
          // rather than SELECT … FOR UPDATE, which has no row to lock on a key's first attempt.
          await tx.execute(sql`SELECT pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext(${key}))`);
          const current = await read(tx, key);
          const { next, result } = step(current);
          if (next === null) {
            if (current !== null) await tx.delete(loginThrottle).where(eq(loginThrottle.key, key));
          } else if (next !== current) {
            const state = {
              failures: next.failures,
              lastFailureAt: new Date(next.lastFailureAt),
              blockedUntil: next.blockedUntil ? new Date(next.blockedUntil) : null,
            };
            await tx
              .insert(loginThrottle)
              .values({ key, ...state })
              .onConflictDoUpdate({ target: loginThrottle.key, set: state });
          }
          return result;
        }),
      ),
    clear: (key) => guard(async () => void (await db.delete(loginThrottle).where(eq(loginThrottle.key, key)))),
  };
}

/** SQLSTATE disk_full: the server could not extend a file. */
const DISK_FULL = "53100";

/** SQLSTATE classes and client codes that mean "the database is not there", not "your request is wrong". */
function unavailable(error: { code?: unknown; errno?: unknown }): boolean {
  const code = String(error.code ?? "");
  const state = String(error.errno ?? "");
  return (
    (code.startsWith("ERR_POSTGRES_") && code !== "ERR_POSTGRES_SERVER_ERROR") ||
    state.startsWith("08") || // connection exception
    state.startsWith("57") || // operator intervention: query_canceled (statement timeout), admin_shutdown, cannot_connect_now
    state === "53300" // too_many_connections
  );
}

async function guarded<T>(
  work: () => Promise<T>,
  deadlineMs: number,
  storage: StorageMonitor,
  unique?: (constraint: string) => ErrorCode,
): Promise<T> {
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError("database_unavailable", "The database did not answer in time.")),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([work(), deadline]);
  } catch (error) {
    if (error instanceof AppError) throw error;
    for (let e: unknown = error; e instanceof Error; e = e.cause) {
      const pg = e as Error & { errno?: unknown; code?: unknown; constraint?: unknown };
      if (unique && pg.errno === "23505") throw new AppError(unique(String(pg.constraint ?? "")));
      if (pg.errno === DISK_FULL) throw storage.full(error);
      if (unavailable(pg))
        throw new AppError("database_unavailable", "The database is not answering.", { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
