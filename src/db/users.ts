// Users: created, found by id or login, listed a page at a time, and changed only while the token
// that asks (its version) and the record the client saw (If-Match) still stand. What administrators
// do to accounts, and deletion, is administration.ts's.
import { and, count, desc, eq, gt, lt, sql, type Column } from "drizzle-orm";
import type { Awaitable } from "../lib/awaitable.ts";
import type { ErrorCode } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import type { UserAdministration } from "./administration.ts";
import { dropTokensIn, PASSWORD_ENDS } from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import { issueIn, type VerificationIssue } from "./email-verifications.ts";
import { linkIn, type NewIdentity } from "./identities.ts";
import type { Dialect } from "./dialect.ts";
import { nameKey, USER_FIELDS, type Role } from "./records.ts";
import { columns, first } from "./rows.ts";
import { inScope, renewSession, type NewRefreshToken } from "./sessions.ts";
import { ROLL_BACK, runUndoable } from "./transactions.ts";
import type { RecordState, UserPage, UserPageBefore, UserRecord } from "./records.ts";
import { unchangedSince, userAtVersion } from "./user-conditions.ts";

export type { RecordState, UserPage, UserPageBefore, UserRecord } from "./records.ts";
export { unchangedSince, userAtVersion } from "./user-conditions.ts";

/**
 * A user to insert: the store sets the token version to 0, updatedAt to createdAt, the status to
 * active, and the role to `user` unless given.
 */
export type NewUser = Pick<UserRecord, "id" | "username" | "email" | "passwordHash" | "createdAt"> & {
  role?: Role;
  /** Set: the address is taken as verified from the start (an account made on the box). */
  emailVerifiedAt?: string | null;
};

export type UserPatch = Partial<Pick<UserRecord, "username" | "email">>;

/** Users, and (administration.ts) what administrators do to them. */
export interface UserStore extends UserAdministration {
  /**
   * Inserts the user (and the audit event, and the e-mail verification with its mail, in the same change).
   * Throws AppError `username_taken` or `email_taken` on a clash.
   */
  create(
    user: NewUser,
    audit?: AuditEvent,
    verification?: VerificationIssue,
    identity?: NewIdentity,
  ): Promise<UserRecord>;
  /** null: no user has this id. */
  findById(id: string): Promise<UserRecord | null>;
  /** Finds by username without regard to case, or by e-mail when `login` holds an `@`. null: no match. */
  findByLogin(login: string): Promise<UserRecord | null>;
  /**
   * Users in id order (oldest first), at most `limit` of them: the first ones, those after `after`, or the
   * last ones before `before` (still oldest first). At once from memory (the cache layer, while the table
   * is unchanged), or a promise.
   */
  list(page: UserPage | UserPageBefore): Awaitable<UserRecord[]>;
  /** How many users there are. At once from memory (the cache layer), or a promise. */
  count(): Awaitable<number>;
  /**
   * Applies the patch; with `tokenVersion`, only while the user's token version is still that one (a
   * write on behalf of a token revoked meanwhile does not land); with `unchanged`, only while the
   * record still holds exactly those values (If-Match: of concurrent writers who read one version,
   * one lands). null: no user has this id, the version has moved on, or the record changed. A new e-mail
   * is unverified (emailVerifiedAt null). Throws `username_taken` / `email_taken`.
   */
  update(
    id: string,
    patch: UserPatch,
    updatedAt: string,
    tokenVersion?: number,
    unchanged?: RecordState,
  ): Promise<UserRecord | null>;
  /**
   * Replaces the hash and bumps the token version, only while the version is still `tokenVersion` (the
   * one the caller's token carries), so of concurrent changes made with one token exactly one lands.
   * In the same change every session of the user ends but `keep`'s, whose refresh tokens are replaced
   * by `keep.refresh`, and the user's mailed e-mail change and reset tokens go. null: no user has this id,
   * or its token version has moved on.
   */
  setPassword(
    id: string,
    passwordHash: string,
    updatedAt: string,
    tokenVersion: number,
    keep?: { sessionId: string; refresh: NewRefreshToken },
    audit?: AuditEvent,
  ): Promise<UserRecord | null>;
}

/** A unique violation on users as the contract's code. */
export const userClash = (detail: string): ErrorCode =>
  detail.includes("identities") ? "identity_taken" : detail.includes("email") ? "email_taken" : "username_taken";

/** The row a NewUser is inserted as: its name key, and updatedAt as createdAt. */
export const insertable = (user: NewUser) => ({
  ...user,
  usernameKey: nameKey(user.username),
  updatedAt: user.createdAt,
});

/** The store's users but for administration (administration.ts), which the store joins to them. */
export function userStore({ db, run, write, tables, transaction }: Dialect): Omit<UserStore, keyof UserAdministration> {
  const { users } = tables;
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
  // Read newest first, so that the limit keeps the ones nearest `before`; handed out oldest first.
  const previousPage = db
    .select(userColumns)
    .from(users)
    .where(lt(users.id, p("before")))
    .orderBy(desc(users.id))
    .limit(p("limit"))
    .prepare("users_before");
  const everyone = db.select({ n: count() }).from(users).prepare("users_count");
  return {
    create: (user, audit, verification, identity) =>
      audit || verification || identity
        ? transaction(
            async (tx) => {
              const [created] = await tx.insert(users).values(insertable(user)).returning(userColumns);
              if (audit) await recordIn(tx, tables, { ...audit, targetId: created!.id });
              if (verification) await issueIn(tx, tables, verification);
              if (identity) await linkIn(tx, tables, identity);
              return created!;
            },
            { timed: true, clash: userClash },
          )
        : write(async () => (await db.insert(users).values(insertable(user)).returning(userColumns))[0]!, userClash),
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
    list: (page) =>
      run(async () => {
        if ("before" in page) return (await previousPage.execute({ before: page.before, limit: page.limit })).reverse();
        const { limit, after } = page;
        return after === undefined ? firstPage.execute({ limit }) : nextPage.execute({ after, limit });
      }),
    count: () => run(async () => (await everyone.execute())[0]!.n),
    update(id, patch, updatedAt, tokenVersion, unchanged) {
      const key = parseId(id);
      if (!key) return Promise.resolve(null);
      const changes = {
        ...patch,
        ...(patch.username !== undefined && { usernameKey: nameKey(patch.username) }),
        // A new address is nobody's word yet: unverified until a link to it is redeemed (or an administrator says).
        ...(patch.email !== undefined && { emailVerifiedAt: null }),
        updatedAt,
      };
      const held = userAtVersion(tables, key, tokenVersion);
      const where = unchanged ? and(held, unchangedSince(tables, unchanged)) : held;
      return write(
        async () => first(await db.update(users).set(changes).where(where).returning(userColumns)),
        userClash,
      );
    },
    async setPassword(id, passwordHash, updatedAt, tokenVersion, keep, audit) {
      const key = parseId(id);
      if (!key) return null;
      const changes = { passwordHash, updatedAt, tokenVersion: sql`${users.tokenVersion} + 1` };
      return runUndoable(
        transaction,
        async (tx) => {
          // The user's row first, then sessions: the order a deletion takes them in (see rotate).
          const user = first(
            await tx
              .update(users)
              .set(changes)
              .where(userAtVersion(tables, key, tokenVersion))
              .returning(userColumns),
          );
          if (!user) return null;
          // If the kept session ended meanwhile (another instance's logout), nothing here lands.
          if (keep && !(await renewSession(tx, tables, key, keep.sessionId, keep.refresh, updatedAt))) throw ROLL_BACK;
          await tx.delete(tables.sessions).where(inScope(tables, key, keep ? { except: keep.sessionId } : "all")!);
          await dropTokensIn(tx, tables, key, PASSWORD_ENDS);
          await recordIn(tx, tables, audit);
          return user;
        },
        null,
      );
    },
  };
}
