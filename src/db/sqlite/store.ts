// The Store contract on bun:sqlite: one file, WAL, full sync, foreign keys, migrated on open.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { count, eq, lt, sql } from "drizzle-orm";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { AppError, type ErrorCode } from "../../errors.ts";
import {
  CATEGORY_FIELDS,
  columns,
  DamagedDatabase,
  LoadRefused,
  NoSuchDatabase,
  USER_FIELDS,
  nameKey,
  type CategoryPage,
  type CategoryPatch,
  type Counts,
  type LoadData,
  type LoadOptions,
  type CategoryRecord,
  type CategoryStore,
  type NewCategory,
  type NewUser,
  type OpenOptions,
  type Store,
  type UserPage,
  type UserPatch,
  type UserRecord,
  type UserStore,
  type ThrottleStore,
  type RevocationStore,
} from "../store.ts";
import { setBounded } from "../../bounded-map.ts";
import { chunks } from "../chunks.ts";
import { heldAt } from "../conditions.ts";
import { storageMonitor, type StorageMonitor } from "../storage.ts";
import { migrateSqlite } from "./migrate.ts";
import { categories, loginThrottle, revokedTokens, users } from "./schema.ts";

type Db = BunSQLiteDatabase;

// Exactly the contract's fields: the *_key columns are storage detail and stay inside.
const userColumns = columns(users, USER_FIELDS);
const categoryColumns = columns(categories, CATEGORY_FIELDS);

// The hot reads run as plain prepared statements whose rows are the records as they are: Drizzle's
// generic row mapping costs more than the queries themselves (90 µs against 42 for a page of 100).
const TABLE_VERSIONS_SQL = `(SELECT version FROM table_versions WHERE name = 'users') AS usersVersion, (SELECT version FROM table_versions WHERE name = 'categories') AS categoriesVersion`;
const USER_SQL = `id, username, email, password_hash AS passwordHash, token_version AS tokenVersion, created_at AS createdAt, updated_at AS updatedAt`;
const CATEGORY_SQL = `id, name, description, color_hex AS colorHex, icon, created_by AS createdBy, created_at AS createdAt, updated_at AS updatedAt`;

/** The largest file checked for damage at start: about 3,000,000 users, some 1.5 s of reading. */
const START_CHECK_MAX_BYTES = 1024 ** 3;

/** How many token holders' records are kept, each for as long as the users table is unchanged. */
const HOLDERS_KEPT = 10_000;

/** Opens (creating if needed, unless `existing`) and migrates the database at `path`, or an in-memory one for ":memory:". */
export function openSqliteStore(path: string, { existing = false }: OpenOptions = {}): Store {
  if (existing) {
    const problem = missingSqlite(path);
    if (problem) throw new NoSuchDatabase(problem);
  } else if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const client = new Database(path, { create: !existing, strict: true });
  if (
    existing &&
    !client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()
  ) {
    client.close();
    throw new NoSuchDatabase(`${path} is not an svc database (it has no svc tables)`);
  }
  // Before anything is written: a damaged page would otherwise surface as a 500 on whatever reads it.
  // It reads the whole file (about 0.5 s for 1,000,000 users), so past START_CHECK_MAX_BYTES start-up
  // leaves it to `svc check`.
  const checked = path !== ":memory:" && statSync(path).size <= START_CHECK_MAX_BYTES;
  const damage = checked ? firstDamage(client) : null;
  if (damage) {
    client.close();
    throw new DamagedDatabase(
      `${path} is damaged (${damage}); restore it from a backup, and see \`svc check\` for the full report`,
    );
  }
  // WAL lets readers run beside the writer; FULL sync makes an acknowledged write survive a crash.
  client.run("PRAGMA journal_mode = WAL");
  client.run("PRAGMA synchronous = FULL");
  client.run("PRAGMA foreign_keys = ON");
  client.run("PRAGMA busy_timeout = 5000");
  const db = drizzle({ client });
  migrateSqlite(db);

  const ping = client.prepare("SELECT 1");
  const versions = client.query<{ usersVersion: number; categoriesVersion: number }, []>(
    `SELECT ${TABLE_VERSIONS_SQL}`,
  );
  // The token check reads only numbers; the user's record is read again only when the users table
  // has changed since it was last read (its version says so), which keeps a request's query small.
  const holder = client.query<{ revoked: number; usersVersion: number; categoriesVersion: number }, [string, string]>(
    `SELECT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ?) AS revoked, ${TABLE_VERSIONS_SQL} FROM users WHERE id = ?`,
  );
  const userById = client.query<UserRecord, [string]>(`SELECT ${USER_SQL} FROM users WHERE id = ?`);
  const holders = new Map<string, { usersVersion: number; user: UserRecord }>();
  const counts = (): Counts => ({
    users: db.select({ n: count() }).from(users).get()!.n,
    categories: db.select({ n: count() }).from(categories).get()!.n,
  });

  const storage = storageMonitor(path === ":memory:" ? undefined : dirname(path));
  const room = <T extends object>(part: T) => whenFull(part, storage);

  return {
    users: room(sqliteUsers(db, client)),
    categories: room(sqliteCategories(db, client)),
    throttle: room(sqliteThrottle(db, client)),
    revocations: room(sqliteRevocations(db)),
    storage: () => storage.state(),
    async versions() {
      const row = versions.get()!;
      return { users: row.usersVersion, categories: row.categoriesVersion };
    },
    async tokenHolder(userId, jti) {
      const row = holder.get(jti, userId);
      if (!row) return null;
      const { revoked, usersVersion, categoriesVersion } = row;
      let known = holders.get(userId);
      if (known?.usersVersion !== usersVersion) {
        // Read right after the version: a write by another process in between makes the record newer
        // than its tag, which costs one more read later, never a stale answer.
        const user = userById.get(userId);
        if (!user) return null;
        known = { usersVersion, user };
        setBounded(holders, userId, known, HOLDERS_KEPT);
      }
      return {
        user: known.user,
        revoked: revoked === 1,
        versions: { users: usersVersion, categories: categoriesVersion },
      };
    },
    // In-process and synchronous: it answers at once or throws, so there is nothing to time out.
    async ping() {
      ping.get();
    },
    // One connection, and every call finishes before the next starts.
    pool: () => ({ size: 1, busy: 0 }),
    async counts() {
      return counts();
    },
    load: room({ load }).load,
    async close() {
      client.close(false);
    },
  };

  async function load(data: LoadData, options: LoadOptions) {
    // bun:sqlite transactions are synchronous; the source is read asynchronously between
    // batches, so the transaction is opened and closed by hand on this one connection.
    client.run("BEGIN IMMEDIATE");
    try {
      const before = counts();
      if (!options.replace && (before.users > 0 || before.categories > 0)) {
        throw new LoadRefused(`the target already holds ${before.users} users and ${before.categories} categories`);
      }
      if (options.replace) {
        db.delete(categories).run();
        db.delete(users).run();
        db.delete(loginThrottle).run();
        db.delete(revokedTokens).run();
      }
      const loaded = { users: 0, categories: 0 };
      for await (const batch of data.users) {
        for (const part of chunks(batch, 500)) {
          db.insert(users)
            .values(part.map((u) => ({ ...u, usernameKey: nameKey(u.username) })))
            .run();
        }
        loaded.users += batch.length;
        options.onProgress?.({ ...loaded });
      }
      for (const part of chunks(data.categories, 500)) {
        db.insert(categories)
          .values(part.map((c) => ({ ...c, nameKey: nameKey(c.name) })))
          .run();
        loaded.categories += part.length;
        options.onProgress?.({ ...loaded });
      }
      const after = counts();
      if (after.users !== options.expect.users || after.categories !== options.expect.categories) {
        throw new LoadRefused(
          `counts after loading (${JSON.stringify(after)}) differ from the source (${JSON.stringify(options.expect)})`,
        );
      }
      client.run("COMMIT");
      return after;
    } catch (error) {
      client.run("ROLLBACK");
      throw error;
    }
  }
}

/** The part's methods, with SQLite's "database or disk is full" turned into AppError storage_full. */
function whenFull<T extends object>(part: T, storage: StorageMonitor): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(part) as Array<[string, (...args: unknown[]) => Promise<unknown>]>) {
    guarded[name] = async (...args: unknown[]) => {
      try {
        return await method(...args);
      } catch (error) {
        throw full(error) ? storage.full(error) : error;
      }
    };
  }
  return guarded as T;
}

function full(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === "SQLITE_FULL") return true;
  }
  return false;
}

/**
 * What SQLite's own check finds wrong, one line each, at most `limit`; none for a sound file.
 * quick_check reads every page but skips index contents: the start-up check; integrity_check is whole.
 */
export function integrityProblems(client: Database, check: "quick_check" | "integrity_check", limit: number): string[] {
  const rows = client.query<Record<string, string>, []>(`PRAGMA ${check}(${limit})`).all();
  const lines = rows
    .flatMap((row) => Object.values(row)[0]!.split("\n"))
    .filter((line) => line !== "ok" && !line.startsWith("*** in database"));
  return lines.slice(0, limit);
}

function firstDamage(client: Database): string | null {
  try {
    return integrityProblems(client, "quick_check", 1)[0] ?? null;
  } catch (error) {
    // Some damage stops the check itself ("database disk image is malformed").
    return error instanceof Error ? error.message : String(error);
  }
}

/** Why `path` names no SQLite database to read; null when a file is there. Nothing is created. */
export function missingSqlite(path: string): string | null {
  if (path === ":memory:") return "an in-memory database is always empty: name a file";
  return existsSync(path) ? null : `no database at ${path}`;
}

function sqliteRevocations(db: Db): RevocationStore {
  return {
    async revoke(jti, expiresAt) {
      db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, new Date().toISOString())).run();
      db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing().run();
    },
  };
}

function sqliteThrottle(db: Db, client: Database): ThrottleStore {
  const byKey = db
    .select()
    .from(loginThrottle)
    .where(eq(loginThrottle.key, sql.placeholder("key")))
    .prepare();
  const clear = (key: string) => db.delete(loginThrottle).where(eq(loginThrottle.key, key)).run();
  return {
    async get(key) {
      return byKey.get({ key }) ?? null;
    },
    async transition(key, step) {
      // IMMEDIATE takes the write lock before the read: another process's transition waits (busy_timeout),
      // and this process runs the whole synchronous transaction without interleaving.
      return client
        .transaction(() => {
          const current = byKey.get({ key }) ?? null;
          const { next, result } = step(current);
          if (next === null) {
            if (current !== null) clear(key);
          } else if (next !== current) {
            const { key: _, ...state } = next;
            db.insert(loginThrottle).values(next).onConflictDoUpdate({ target: loginThrottle.key, set: state }).run();
          }
          return result;
        })
        .immediate();
    },
    async clear(key) {
      clear(key);
    },
  };
}

function sqliteUsers(db: Db, client: Database): UserStore {
  const select = `SELECT ${USER_SQL} FROM users`;
  const byId = client.query<UserRecord, [string]>(`${select} WHERE id = ?`);
  const byUsername = client.query<UserRecord, [string]>(`${select} WHERE username_key = ?`);
  const byEmail = client.query<UserRecord, [string]>(`${select} WHERE email = ?`);
  const first = client.query<UserRecord, [number]>(`${select} ORDER BY id LIMIT ?`);
  const next = client.query<UserRecord, [string, number]>(`${select} WHERE id > ? ORDER BY id LIMIT ?`);

  return {
    async create(user: NewUser) {
      const row = { ...user, usernameKey: nameKey(user.username), updatedAt: user.createdAt };
      return uniqueOrThrow(() => db.insert(users).values(row).returning(userColumns).get(), userClash);
    },
    async findById(id) {
      return byId.get(id);
    },
    async findByLogin(login) {
      return login.includes("@") ? byEmail.get(login.toLowerCase()) : byUsername.get(nameKey(login));
    },
    async list({ limit, after }: UserPage) {
      return after === undefined ? first.all(limit) : next.all(after, limit);
    },
    async update(id, patch: UserPatch, updatedAt, tokenVersion) {
      const changes = {
        ...patch,
        ...(patch.username !== undefined && { usernameKey: nameKey(patch.username) }),
        updatedAt,
      };
      const row = uniqueOrThrow(
        () =>
          db
            .update(users)
            .set(changes)
            .where(heldAt(users, id, tokenVersion))
            .returning(userColumns)
            .get(),
        userClash,
      );
      return row ?? null;
    },
    async setPassword(id, passwordHash, updatedAt, tokenVersion) {
      const row = db
        .update(users)
        .set({ passwordHash, updatedAt, tokenVersion: sql`${users.tokenVersion} + 1` })
        .where(heldAt(users, id, tokenVersion))
        .returning(userColumns)
        .get();
      return row ?? null;
    },
    async delete(id, tokenVersion) {
      return (
        db
          .delete(users)
          .where(heldAt(users, id, tokenVersion))
          .returning({ id: users.id })
          .all().length > 0
      );
    },
  };
}

function sqliteCategories(db: Db, client: Database): CategoryStore {
  const all = client.query<CategoryRecord, []>(`SELECT ${CATEGORY_SQL} FROM categories ORDER BY name_key, id`);
  // -1: SQLite's "no limit".
  const page = client.query<CategoryRecord, [string, string, number]>(
    `SELECT ${CATEGORY_SQL} FROM categories WHERE (name_key, id) > (?, ?) ORDER BY name_key, id LIMIT ?`,
  );
  const first = client.query<CategoryRecord, [number]>(
    `SELECT ${CATEGORY_SQL} FROM categories ORDER BY name_key, id LIMIT ?`,
  );
  const byId = client.query<CategoryRecord, [string]>(`SELECT ${CATEGORY_SQL} FROM categories WHERE id = ?`);

  return {
    async list({ first: limit, after }: CategoryPage = {}) {
      if (after) return page.all(nameKey(after.name), after.id, limit ?? -1);
      return limit === undefined || limit === null ? all.all() : first.all(limit);
    },
    async findById(id) {
      return byId.get(id);
    },
    async create(category: NewCategory) {
      const row = { ...category, nameKey: nameKey(category.name), updatedAt: category.createdAt };
      return uniqueOrThrow(
        () => db.insert(categories).values(row).returning(categoryColumns).get(),
        () => "category_name_taken",
      );
    },
    async update(id, patch: CategoryPatch, updatedAt) {
      const changes = {
        ...patch,
        ...(patch.name !== undefined && { nameKey: nameKey(patch.name) }),
        updatedAt,
      };
      const row = uniqueOrThrow(
        () => db.update(categories).set(changes).where(eq(categories.id, id)).returning(categoryColumns).get(),
        () => "category_name_taken",
      );
      return row ?? null;
    },
    async delete(id) {
      return db.delete(categories).where(eq(categories.id, id)).returning({ id: categories.id }).all().length > 0;
    },
  };
}

function userClash(message: string): ErrorCode {
  return message.includes("email") ? "email_taken" : "username_taken";
}

/** Runs a write and turns SQLite's unique-constraint failure into the contract's AppError. */
function uniqueOrThrow<T>(write: () => T, codeFor: (message: string) => ErrorCode): T {
  try {
    return write();
  } catch (error) {
    const violation = uniqueViolation(error);
    if (violation === null) throw error;
    throw new AppError(codeFor(violation));
  }
}

function uniqueViolation(error: unknown): string | null {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE") return e.message;
  }
  return null;
}
