// The storage contract in domain words. Every database svc supports implements it, and one
// conformance suite (test/store/) holds each implementation to it.
import type { Awaitable } from "../awaitable.ts";
import type { ChangeFeed } from "../realtime/events.ts";
import type { AuditEvent, AuditStore } from "./audit.ts";
import type { CategoryRecord, CategoryStore } from "./categories.ts";
import type { IdempotencyStore } from "./idempotency.ts";
import type { PasswordResetStore } from "./resets.ts";
import type { NewRefreshToken, SessionBatch, SessionStore } from "./sessions.ts";
import type { ThrottleStore } from "./throttle.ts";
import type { RevocationStore, TableVersions, TokenHolder, TokenState } from "./tokens.ts";
import type { StorageState } from "./storage.ts";
import type { AccountStatus, Role } from "./records.ts";
import type { UpgradeStep } from "./upgrades.ts";

export {
  ACCOUNT_STATUSES,
  AUDIT_FIELDS,
  CATEGORY_FIELDS,
  nameKey,
  REFRESH_FIELDS,
  ROLES,
  SESSION_FIELDS,
  USER_FIELDS,
  type AccountStatus,
  type Role,
} from "./records.ts";
export type { AuditEvent, AuditFilter, AuditStore } from "./audit.ts";
export type { CategoryPage, CategoryPatch, CategoryRecord, CategoryStore, NewCategory } from "./categories.ts";
export type {
  NewRefreshToken,
  PresentedRefresh,
  RefreshTokenRecord,
  Rotation,
  SessionBatch,
  SessionRecord,
  SessionScope,
  SessionStore,
} from "./sessions.ts";
export type { PasswordResetRecord, PasswordResetStore, Redemption } from "./resets.ts";
export type { ThrottleRecord, ThrottleStore, ThrottleTransition } from "./throttle.ts";
export type {
  RevocationStore,
  TableVersions,
  TokenHolder,
  TokenStanding,
  TokenState,
} from "./tokens.ts";
export type {
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotencyRecord,
  IdempotencyStore,
} from "./idempotency.ts";

export interface UserRecord {
  id: string;
  username: string;
  /** Lower case. */
  email: string;
  passwordHash: string;
  /** Tokens carry the version they were issued under; bumping it revokes every earlier token. */
  tokenVersion: number;
  createdAt: string;
  updatedAt: string;
  role: Role;
  status: AccountStatus;
  /** The last successful login (or redeemed reset code); null: never. */
  lastLoginAt: string | null;
}

/**
 * A user to insert: the store sets the token version to 0, updatedAt to createdAt, the status to
 * active, and the role to `user` unless given.
 */
export type NewUser = Pick<UserRecord, "id" | "username" | "email" | "passwordHash" | "createdAt"> & {
  role?: Role;
};

/** The values a client saw, for writes conditional on them (If-Match). */
export type RecordState = Pick<UserRecord, "username" | "email" | "role" | "status" | "updatedAt">;

/** What an administrator may change of an account. */
export type AccountChange = Partial<Pick<UserRecord, "role" | "status">>;

/** The admin list of users: filters, and a page in id order. */
export interface UserFilter extends UserPage {
  /** A prefix of the username or the e-mail, without regard to case. */
  search?: string;
  role?: Role;
  status?: AccountStatus;
}

export type UserPatch = Partial<Pick<UserRecord, "username" | "email">>;

export interface UserPage {
  limit: number;
  /** Only users whose id sorts after this one (keyset paging). */
  after?: string;
}

export interface UserStore {
  /** Inserts the user (and the audit event, in the same change). Throws AppError `username_taken` or `email_taken` on a clash. */
  create(user: NewUser, audit?: AuditEvent): Promise<UserRecord>;
  /** null: no user has this id. */
  findById(id: string): Promise<UserRecord | null>;
  /** Finds by username without regard to case, or by e-mail when `login` holds an `@`. null: no match. */
  findByLogin(login: string): Promise<UserRecord | null>;
  /** Users in id order (oldest first), at most `limit` of them. */
  /** At once from memory (the cache layer, while the table is unchanged), or a promise. */
  list(page: UserPage): Awaitable<UserRecord[]>;
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
   * Applies the patch; with `tokenVersion`, only while the user's token version is still that one (a
   * write on behalf of a token revoked meanwhile does not land); with `unchanged`, only while the
   * record still holds exactly those values (If-Match: of concurrent writers who read one version,
   * one lands). null: no user has this id, the version has moved on, or the record changed. Throws
   * `username_taken` / `email_taken`.
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
   * by `keep.refresh`. null: no user has this id, or its token version has moved on.
   */
  setPassword(
    id: string,
    passwordHash: string,
    updatedAt: string,
    tokenVersion: number,
    keep?: { sessionId: string; refresh: NewRefreshToken },
    audit?: AuditEvent,
  ): Promise<UserRecord | null>;
  /**
   * Deletes the user (recording `audit` with it); their categories stay with no creator. With
   * `tokenVersion`, only while the token version is still that one. false: no user has this id, or
   * the version has moved on. Throws AppError `last_admin` for the last active admin.
   */
  delete(id: string, tokenVersion?: number, audit?: AuditEvent): Promise<boolean>;
}

export interface Counts {
  users: number;
  categories: number;
}

/** What `svc copy` moves: users with their hashes and token versions, categories with their creators, sessions. */
export interface LoadData {
  /** Users in batches, so a large database is never held whole. */
  users: AsyncIterable<UserRecord[]>;
  categories: CategoryRecord[];
  /** Sessions in batches, loaded after the users they belong to. */
  sessions?: AsyncIterable<SessionBatch>;
  /** The audit log in batches, oldest first. */
  audit?: AsyncIterable<AuditEvent[]>;
}

export interface LoadOptions {
  /** Empty the tables first; without it, loading into a non-empty store is refused. */
  replace: boolean;
  /** The counts the store must hold once loaded; anything else rolls the load back. */
  expect: Counts;
  onProgress?: (loaded: Counts) => void;
}

/** The storage contract: what services, the authenticator and the commands use. */
export interface Store {
  /** Which database this is. */
  readonly kind: "sqlite" | "postgres";
  readonly users: UserStore;
  readonly categories: CategoryStore;
  readonly throttle: ThrottleStore;
  readonly revocations: RevocationStore;
  readonly sessions: SessionStore;
  readonly resets: PasswordResetStore;
  readonly audit: AuditStore;
  readonly idempotency: IdempotencyStore;
  /** Category changes as they commit, from every instance on this database. */
  readonly changes: ChangeFeed;
  /**
   * The user with this id and whether the token is revoked: its `jti` was, or it names a session
   * (`sessionId`) the user no longer has; and that session's expiry. It runs on every authenticated
   * request. null: no user has this id.
   */
  tokenHolder(userId: string, jti: string, sessionId?: string): Awaitable<TokenHolder | null>;
  /** Resolves when the database answers a trivial query within timeoutMs; rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /**
   * "full": a write failed for want of space within the last few seconds (on SQLite, also while its
   * volume has under 1 MiB free). Such writes throw AppError `storage_full`; reads go on.
   */
  storage(): StorageState;
  /** The database's connections right now. */
  pool(): PoolState;
  counts(): Promise<Counts>;
  /**
   * Writes the records exactly as given (ids, hashes, token versions, timestamps) in one transaction.
   * Throws, leaving the store as it was, when the store is not empty and `replace` is false, or when
   * the counts afterwards differ from `expect`.
   */
  load(data: LoadData, options: LoadOptions): Promise<Counts>;
  close(): Promise<void>;
}

/** The database's connections: how many may be pooled, how many are open, and how many of those are busy. */
export interface PoolState {
  max: number;
  /** Open now (on PostgreSQL, with the LISTEN connection beside the pool once someone subscribes). */
  open: number;
  /** Serving an operation now; never more than `open`. */
  busy: number;
}

/**
 * What a database offers besides the contract, for the cache layer (src/cache/) that decorates it:
 * the tables' change counters, which let every instance keep reads while nothing has changed.
 */
export interface VersionedStore extends Store {
  /** Equal counters mean unchanged tables. */
  versions(): Awaitable<TableVersions>;
  /**
   * The token's standing (as tokenHolder's), and the versions, provided the user exists; in one statement,
   * since it runs on every authenticated request. The versions are read before any data the request
   * goes on to read. null: no user has this id.
   */
  tokenState(userId: string, jti: string, sessionId?: string): Awaitable<TokenState | null>;
}

/** A write referred to a row that no longer exists (a user deleted while the request ran). */
export class ReferenceGone extends Error {
  override name = "ReferenceGone";
}

/** A conditional change found the record at another version: nothing was written. */
export class StaleVersion extends Error {
  override name = "StaleVersion";
  constructor(readonly current: number) {
    super(`the record is at version ${current}`);
  }
}

export class LoadRefused extends Error {
  override name = "LoadRefused";
}

/** The database file is damaged (SQLite's integrity check found a problem); nothing was written to it. */
export class DamagedDatabase extends Error {
  override name = "DamagedDatabase";
}

/** Opening with `existing` found no svc database there; nothing was created. */
export class NoSuchDatabase extends Error {
  override name = "NoSuchDatabase";
}

export interface OpenOptions {
  /**
   * Only an svc database that already exists (every command but serve and migrate): a missing file,
   * an in-memory database or one without svc's tables is NoSuchDatabase, and nothing is created. An
   * older svc database is migrated forward, as serve would. Either way, one a later svc migrated is
   * NewerDatabase.
   */
  existing?: boolean;
  /** Told where SQLite's log, left from a database that was gone, was moved before a new one was made (setAsideNotice). */
  onSetAside?: (moved: readonly string[]) => void;
  /** Told of each step of bringing the database up to this binary: the snapshot before, each migration applied. */
  onUpgrade?: (step: UpgradeStep) => void;
}

/** What svc says when it has set aside a log left from a database that was gone (sqlite/connection.ts). */
export function setAsideNotice(moved: readonly string[]): string {
  return `the database file was missing but not its write-ahead log or journal: left from a database that is gone, it was set aside (${moved.join(", ")}) and a new, empty database made`;
}
