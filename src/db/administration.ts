// What administrators do to accounts (search them, count the active admins, change a role or a
// status) and deletion: the changes that may take an admin away serialize on one lock, so that one
// active admin always remains, whichever instances the changes come from.
import { and, count, eq, gt, ne, or, sql, type SQL } from "drizzle-orm";
import { AppError } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import { dropTokensIn } from "./account-token-rows.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { nameKey, USER_FIELDS, type AccountStatus, type Role } from "./records.ts";
import { columns, first, withId } from "./rows.ts";
import { TIMED } from "./transactions.ts";
import type { RecordState, UserPage, UserRecord } from "./records.ts";
import { unchangedSince, userAtVersion } from "./user-conditions.ts";

/** What an administrator may change of an account. */
export type AccountChange = Partial<Pick<UserRecord, "role" | "status">>;

/** The admin list of users: filters, and a page in id order. */
export interface UserFilter extends UserPage {
  /** A prefix of the username or the e-mail, without regard to case. */
  search?: string;
  role?: Role;
  status?: AccountStatus;
}

/** What administrators do to accounts, and deletion: the changes that may take the last active admin away. */
export interface UserAdministration {
  /** Users matching the filter, in id order, at most `limit` of them. */
  search(filter: UserFilter): Promise<UserRecord[]>;
  /** How many accounts are active admins. */
  activeAdmins(): Promise<number>;
  /**
   * Applies an administrator's change and records `audit` with it. Disabling also bumps the token
   * version and ends every session, in the same change. A change equal to the record writes nothing
   * (and records nothing). null: no user has this id. Throws AppError `last_admin` when it would leave
   * no active admin (of concurrent changes, on any instance, never all land).
   */
  administer(
    id: string,
    change: AccountChange,
    updatedAt: string,
    audit: AuditEvent,
    unchanged?: RecordState & Pick<UserRecord, "lastLoginAt">,
  ): Promise<UserRecord | null | "changed">;
  /**
   * Deletes the user (recording `audit` with it); their categories stay with no creator. With
   * `tokenVersion`, only while the token version is still that one. false: no user has this id, or
   * the version has moved on. Throws AppError `last_admin` for the last active admin.
   */
  delete(id: string, tokenVersion?: number, audit?: AuditEvent): Promise<boolean>;
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

export function userAdministration({ db, run, tables, transaction, serialize }: Dialect): UserAdministration {
  const { users, sessions } = tables;
  const userColumns = columns(users, USER_FIELDS);
  return {
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
    administer: (id, change, updatedAt, audit, unchanged) =>
      withId(id, null, (key) =>
        transaction(async (tx) => {
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
            .where(unchanged ? and(eq(users.id, key), unchangedSince(tables, unchanged)) : eq(users.id, key))
            .returning(userColumns);
          if (!updated) return "changed" as const;
          if (disabling) {
            await tx.delete(sessions).where(eq(sessions.userId, key));
            // A pending change of address may be a thief's, made with the session the disabling ends; the
            // owner's reset links stay (redeemed while disabled, they answer account_disabled).
            await dropTokensIn(tx, tables, key, ["email_change"]);
          }
          await recordIn(tx, tables, audit);
          return updated;
        }, TIMED),
      ),
    delete: (id, tokenVersion, audit) =>
      withId(id, false, (key) =>
        transaction(async (tx) => {
          await serialize(tx, ADMINS);
          const target = first(
            await tx
              .select(userColumns)
              .from(users)
              .where(userAtVersion(tables, key, tokenVersion)),
          );
          if (!target) return false;
          await keepAnAdmin(tx, tables, target, null);
          const gone = await tx
            .delete(users)
            .where(userAtVersion(tables, key, tokenVersion))
            .returning({ id: users.id });
          if (gone.length === 0) return false;
          await recordIn(tx, tables, audit);
          return true;
        }, TIMED),
      ),
  };
}
