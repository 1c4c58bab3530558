// Sessions and their refresh tokens: started at login, rotated with every refresh (of concurrent
// rotations exactly one lands), listed and ended by their user, pruned once expired.
import { and, desc, eq, gt, inArray, isNull, ne, sql, type SQL } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Db, DbColumn, Dialect, Tables } from "./dialect.ts";
import { REFRESH_FIELDS, SESSION_FIELDS, USER_FIELDS } from "./records.ts";
import { columns, first, pruneBefore } from "./rows.ts";
import { ROLL_BACK, TIMED, runUndoable } from "./transactions.ts";
import type { NewRefreshToken, RefreshTokenRecord, Rotation, SessionRecord, UserRecord } from "./records.ts";

export type { NewRefreshToken, RefreshTokenRecord, Rotation, SessionRecord } from "./records.ts";

/** A refresh token presented: the token, its session and the session's user. */
export interface PresentedRefresh {
  token: RefreshTokenRecord;
  session: SessionRecord;
  user: UserRecord;
}

/** Which of a user's sessions to end. */
export type SessionScope = { only: string } | { except: string } | "all";

/** Sessions and their refresh tokens; every instance sees the same. */
export interface SessionStore {
  /**
   * Starts the session with its first refresh token, provided its user is still active at
   * `holder.tokenVersion`. With `login`, also stamps the user's lastLoginAt and records the event, in
   * the same change. null: the user is gone, disabled, or their token version moved on.
   */
  start(
    session: SessionRecord,
    refresh: NewRefreshToken,
    holder: { tokenVersion: number },
    login?: AuditEvent,
  ): Promise<SessionRecord | null>;
  /** The refresh token with this digest, its session and user, whatever their state. null: unknown. */
  findRefresh(digest: string): Promise<PresentedRefresh | null>;
  /**
   * Marks the token rotated (with the sealed answer), adds its successor and moves the session's
   * lastUsedAt and expiresAt, as one change, only while the token is still current: of concurrent
   * rotations, on any instance, exactly one lands. false: another came first, or the session is gone.
   */
  rotate(digest: string, rotation: Rotation): Promise<boolean>;
  /** The user's sessions not yet expired at `now`, newest first. */
  list(userId: string, now: string): Promise<SessionRecord[]>;
  /** Ends the user's sessions in scope (with their refresh tokens), recording `audit` if any ended; how many ended. */
  end(userId: string, scope: SessionScope, audit?: AuditEvent): Promise<number>;
  /** Forgets up to `limit` expired sessions and expired refresh tokens; how many rows went. */
  prune(now: string, limit: number): Promise<number>;
  /** Up to `limit` sessions in id order after `after`, with all their refresh tokens (for `svc copy`). */
  page(limit: number, after?: string): Promise<SessionBatch>;
}

/** Sessions and their refresh tokens, as `svc copy` moves them. */
export interface SessionBatch {
  sessions: SessionRecord[];
  refreshTokens: RefreshTokenRecord[];
}

/** A refresh token row, not yet rotated, of the session. */
export const currentToken = (refresh: NewRefreshToken, sessionId: string) => ({
  ...refresh,
  sessionId,
  rotatedAt: null,
  successor: null,
});

/**
 * Which of the user's sessions a scope names. A session id that is no id names no session: none is
 * the one (null: nothing to match), and all are the others.
 */
export function inScope({ sessions }: Tables, userId: string, scope: SessionScope): SQL | null {
  const mine = eq(sessions.userId, userId);
  if (scope === "all") return mine;
  if ("only" in scope) {
    const id = parseId(scope.only);
    return id === null ? null : and(mine, eq(sessions.id, id))!;
  }
  const id = parseId(scope.except);
  return id === null ? mine : and(mine, ne(sessions.id, id))!;
}

/**
 * Replaces the session's refresh tokens with `refresh`, and marks it used at `at`, provided the user
 * still has it. false: the session is gone.
 */
export async function renewSession(
  tx: Db,
  { sessions, refreshTokens }: Tables,
  userId: string,
  sessionId: string,
  refresh: NewRefreshToken,
  at: string,
): Promise<boolean> {
  const session = parseId(sessionId);
  if (!session) return false;
  const renewed = await tx
    .update(sessions)
    .set({ lastUsedAt: at, expiresAt: refresh.expiresAt })
    .where(and(eq(sessions.id, session), eq(sessions.userId, userId)))
    .returning({ id: sessions.id });
  if (renewed.length === 0) return false;
  await tx.delete(refreshTokens).where(eq(refreshTokens.sessionId, session));
  await tx.insert(refreshTokens).values(currentToken(refresh, session));
  return true;
}

export function sessionStore(dialect: Dialect): SessionStore {
  const { db, run, write, tables, transaction } = dialect;
  const { sessions, refreshTokens, users } = tables;
  const sessionColumns = columns(sessions, SESSION_FIELDS);
  const p = sql.placeholder;
  const byDigest = db
    .select({
      token: columns(refreshTokens, REFRESH_FIELDS),
      session: sessionColumns,
      user: columns(users, USER_FIELDS),
    })
    .from(refreshTokens)
    .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(refreshTokens.digest, p("digest")))
    .prepare("refresh_by_digest");
  const live = db
    .select(sessionColumns)
    .from(sessions)
    .where(and(eq(sessions.userId, p("user")), gt(sessions.expiresAt, p("now"))))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .prepare("live_sessions");

  /**
   * rotate's three statements, prepared once: built by the query builder on every rotation they took
   * more CPU than SQLite's work for them (bench/results.md, #59). Prepared on `db`, which on SQLite is
   * the connection its transaction runs on (PostgreSQL rotates in one statement of its own).
   *
   * Rows are locked in the order every other write takes them (user, session, refresh tokens), so a
   * rotation racing a logout, a deletion or a password change waits for it instead of deadlocking.
   */
  const rotationStatements = () => {
    const current = and(eq(refreshTokens.digest, p("digest")), isNull(refreshTokens.rotatedAt));
    const ofToken = db.select({ id: refreshTokens.sessionId }).from(refreshTokens).where(current);
    return {
      move: db
        .update(sessions)
        .set({ lastUsedAt: sql`${p("at")}`, expiresAt: sql`${p("expiresAt")}` })
        .where(eq(sessions.id, sql`(${ofToken})`))
        .returning({ id: sessions.id })
        .prepare("rotate_move_session"),
      // The compare-and-set: only a current token turns rotated, so one rotation of it lands.
      mark: db
        .update(refreshTokens)
        .set({ rotatedAt: sql`${p("at")}`, successor: sql`${p("sealed")}` })
        .where(current)
        .returning({ digest: refreshTokens.digest })
        .prepare("rotate_mark_token"),
      add: db
        .insert(refreshTokens)
        .values({ digest: p("digest"), sessionId: p("sessionId"), expiresAt: p("expiresAt") })
        .prepare("rotate_add_successor"),
    };
  };
  let prepared: ReturnType<typeof rotationStatements> | undefined;

  const pruneOne = (table: typeof sessions | typeof refreshTokens, key: DbColumn, now: string, limit: number) =>
    pruneBefore(db, table, key, table.expiresAt, now, limit);

  return {
    start: (session, refresh, { tokenVersion }, login) =>
      transaction(async (tx) => {
        const user = parseId(session.userId);
        if (!user) return null;
        const live = and(eq(users.id, user), eq(users.status, "active"), eq(users.tokenVersion, tokenVersion));
        // A login stamps the user (its row locked first, as every write takes it); another start only looks.
        const holder = login
          ? await tx.update(users).set({ lastLoginAt: session.createdAt }).where(live).returning({ id: users.id })
          : await tx.select({ id: users.id }).from(users).where(live);
        if (holder.length === 0) return null;
        const [started] = await tx.insert(sessions).values(session).returning(sessionColumns);
        await tx.insert(refreshTokens).values(currentToken(refresh, session.id));
        await recordIn(tx, tables, login);
        return started!;
      }, TIMED),
    findRefresh: (digest) => run(async () => first(await byDigest.execute({ digest }))),
    async rotate(digest, rotation) {
      if (dialect.postgres) return dialect.postgres.rotate(digest, rotation);
      const { at, successor, sealed } = rotation;
      const { move, mark, add } = (prepared ??= rotationStatements());
      return runUndoable(
        transaction,
        async () => {
          const [session] = await move.execute({ digest, at, expiresAt: successor.expiresAt });
          if (!session) return false;
          const rotated = await mark.execute({ digest, at, sealed });
          if (rotated.length === 0) throw ROLL_BACK;
          await add.execute({ digest: successor.digest, sessionId: session.id, expiresAt: successor.expiresAt });
          return true;
        },
        false,
      );
    },
    list(userId, now) {
      const user = parseId(userId);
      return user ? run(() => live.execute({ user, now })) : Promise.resolve([]);
    },
    end(userId, scope, audit) {
      const user = parseId(userId);
      const which = user && inScope(tables, user, scope);
      if (!which) return Promise.resolve(0);
      const endIn = async (tx: Db) => (await tx.delete(sessions).where(which).returning({ id: sessions.id })).length;
      if (!audit) return write(() => endIn(db));
      return transaction(async (tx) => {
        const ended = await endIn(tx);
        if (ended > 0) await recordIn(tx, tables, audit);
        return ended;
      }, TIMED);
    },
    page: (limit, after) =>
      run(async () => {
        const query = db.select(sessionColumns).from(sessions).$dynamic();
        const from = after === undefined ? null : parseId(after);
        if (from) query.where(gt(sessions.id, from));
        const page = await query.orderBy(sessions.id).limit(limit);
        const ids = page.map((session) => session.id);
        const tokens =
          ids.length === 0
            ? []
            : await db
                .select(columns(refreshTokens, REFRESH_FIELDS))
                .from(refreshTokens)
                .where(inArray(refreshTokens.sessionId, ids));
        return { sessions: page, refreshTokens: tokens };
      }),
    prune: (now, limit) =>
      write(async () => {
        // Sessions first: their tokens go with them, and what is left of the limit goes to tokens.
        const gone = await pruneOne(sessions, sessions.id, now, limit);
        return gone < limit ? gone + (await pruneOne(refreshTokens, refreshTokens.digest, now, limit - gone)) : gone;
      }),
  };
}
