// Identities at OpenID providers linked to accounts, and the one-time codes a flow with mode=code ends in.
// An identity is its issuer and subject; an account keeps at least one way to sign in (a password, a
// passkey or an identity), which unlinking checks under the user's row lock, as removing a passkey does.
import { and, count, eq, gt, inArray, isNull, lt, ne } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { lockUserIn } from "./account-token-rows.ts";
import { type AuditEvent, recordIn } from "./audit.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { NO_PASSWORD } from "./records.ts";
import { columns, first, pageAfter } from "./rows.ts";
import { insertForUser, ROLL_BACK, runUndoable } from "./transactions.ts";

export interface IdentityRecord {
  id: string;
  userId: string;
  /** The provider's name (SVC_OIDC_PROVIDERS) when it was linked. */
  provider: string;
  issuer: string;
  subject: string;
  /** The address the provider gave at the last sign-in; shown, never matched on. */
  email: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

const BY_ID = { ids: true };
const IDENTITY_FIELDS = ["id", "userId", "provider", "issuer", "subject", "email", "createdAt", "lastUsedAt"] as const;

/** An identity to link: all of it, as the store keeps it. */
export type NewIdentity = IdentityRecord;

export interface OidcCodeRecord {
  /** SHA-256 of the code (refreshDigest): the code itself is never kept. */
  digest: string;
  userId: string;
  /** RFC 8176's names, as the session's amr. */
  amr: string[];
  createdAt: string;
  expiresAt: string;
}

export interface IdentityStore {
  /** The identity the provider's issuer and subject name, whoever's it is; null: none. */
  find(issuer: string, subject: string): Promise<IdentityRecord | null>;
  /** The user's identities, oldest first. */
  list(userId: string): Promise<IdentityRecord[]>;
  /**
   * Links the identity to its user with its audit event in one change. "taken": this issuer and subject are
   * linked already (to anyone), or the user has an identity at this provider; null: the user is gone. Either
   * way nothing is written.
   */
  link(identity: IdentityRecord, audit: AuditEvent): Promise<IdentityRecord | "taken" | null>;
  /** Records a sign-in with the identity: when, and the address the provider gave this time. */
  recordUse(id: string, email: string | null, at: string): Promise<void>;
  /**
   * Unlinks the user's identity at `provider` with its audit event. "last": it is the account's last way to
   * sign in (no password, no passkey, no other identity), so nothing is written; false: the user has none there.
   */
  unlink(userId: string, provider: string, audit: AuditEvent): Promise<boolean | "last">;
  /** Keeps a one-time code handed out. */
  issueCode(code: OidcCodeRecord): Promise<void>;
  /** Takes the code with this digest, once, if unexpired at `at`: of concurrent takes one gets it; null otherwise. */
  takeCode(digest: string, at: string): Promise<OidcCodeRecord | null>;
  /** Forgets up to `limit` codes expired at `now`; how many went. */
  pruneCodes(now: string, limit: number): Promise<number>;
  /** For `svc copy`: how many identities there are. */
  count(): Promise<number>;
  /** For `svc copy`: up to `limit` identities in id order after `after`. */
  page(limit: number, after?: string): Promise<IdentityRecord[]>;
}

/** How many identities there are, within a transaction or not (`svc copy` checks a load by it). */
export async function identityCountIn(db: Db, { identities }: Tables): Promise<number> {
  const [row] = await db.select({ n: count() }).from(identities);
  return row!.n;
}

/**
 * Whether the user (`user`, a parsed id) still has a way to sign in: a password, a passkey or an identity.
 * Asked under the user's row lock by whatever removes one of them (unlinking, a passkey's removal), after
 * removing it, so that two removals at once cannot each leave the other as the last.
 */
export async function hasWayIn(tx: Db, { users, passkeys, identities }: Tables, user: string): Promise<boolean> {
  const [password] = await tx
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.id, user), ne(users.passwordHash, NO_PASSWORD)));
  if (password!.n > 0) return true;
  const [keys] = await tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, user));
  if (keys!.n > 0) return true;
  const [linked] = await tx.select({ n: count() }).from(identities).where(eq(identities.userId, user));
  return linked!.n > 0;
}

/** Links an identity within a change that makes its account (users.create, invitations.redeem). */
export async function linkIn(tx: Db, { identities }: Tables, identity: NewIdentity): Promise<void> {
  await tx.insert(identities).values(identity);
}

export function identityStore(dialect: Dialect): IdentityStore {
  const { db, run, write, transaction, tables } = dialect;
  const { identities, oidcCodes } = tables;
  const asRecord = (row: typeof identities.$inferSelect): IdentityRecord => ({ ...row });

  return {
    async find(issuer, subject) {
      const row = first(
        await run(() =>
          db
            .select()
            .from(identities)
            .where(and(eq(identities.issuer, issuer), eq(identities.subject, subject)))
            .limit(1),
        ),
      );
      return row && asRecord(row);
    },
    async list(userId) {
      const key = parseId(userId);
      if (!key) return [];
      const rows = await run(() =>
        db.select().from(identities).where(eq(identities.userId, key)).orderBy(identities.createdAt, identities.id),
      );
      return rows.map(asRecord);
    },
    async link(identity, audit) {
      const key = parseId(identity.userId);
      if (!key) return null;
      return insertForUser(dialect, audit, async (tx) => {
        const inserted = first(
          await tx
            .insert(identities)
            .values({ ...identity, userId: key })
            .onConflictDoNothing()
            .returning(),
        );
        return inserted && asRecord(inserted);
      });
    },
    async recordUse(id, email, at) {
      const key = parseId(id);
      if (!key) return;
      await write(() => db.update(identities).set({ lastUsedAt: at, email }).where(eq(identities.id, key)));
    },
    unlink(userId, provider, audit) {
      const user = parseId(userId);
      if (!user) return Promise.resolve(false);
      return runUndoable(
        transaction,
        async (tx) => {
          // The user's row first: two unlinks (or an unlink and a passkey's removal) at once see each other.
          await lockUserIn(tx, dialect, userId);
          const mine = and(eq(identities.userId, user), eq(identities.provider, provider));
          const [found] = await tx.select({ id: identities.id }).from(identities).where(mine);
          if (!found) return false;
          await tx.delete(identities).where(mine);
          // Counted after the delete, within the change: a way in removed alongside (a passkey) is seen.
          if (!(await hasWayIn(tx, tables, user))) throw ROLL_BACK;
          await recordIn(tx, tables, audit);
          return true;
        },
        "last" as const,
      );
    },
    async issueCode(code) {
      await write(() => db.insert(oidcCodes).values({ ...code, amr: code.amr.join(",") }));
    },
    async takeCode(digest, at) {
      const row = first(
        await write(() =>
          db
            .update(oidcCodes)
            .set({ usedAt: at })
            .where(and(eq(oidcCodes.digest, digest), isNull(oidcCodes.usedAt), gt(oidcCodes.expiresAt, at)))
            .returning(),
        ),
      );
      if (!row) return null;
      return {
        digest: row.digest,
        userId: row.userId,
        amr: row.amr.split(",").filter(Boolean),
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
      };
    },
    count: () => run(() => identityCountIn(db, tables)),
    page: (limit, after) =>
      run(() => pageAfter(db, identities, columns(identities, IDENTITY_FIELDS), identities.id, limit, after, BY_ID)),
    async pruneCodes(now, limit) {
      const expired = db
        .select({ digest: oidcCodes.digest })
        .from(oidcCodes)
        .where(lt(oidcCodes.expiresAt, now))
        .limit(limit);
      const gone = await write(() =>
        db
          .delete(oidcCodes)
          .where(and(inArray(oidcCodes.digest, expired), lt(oidcCodes.expiresAt, now)))
          .returning({ digest: oidcCodes.digest }),
      );
      return gone.length;
    },
  };
}
