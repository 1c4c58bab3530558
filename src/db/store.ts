// The storage contract in domain words: the Store, assembled from the aggregates' contracts (each in
// its own file beside its Drizzle code: users.ts, categories.ts, sessions.ts, ...), re-exported here
// under the names the rest of svc imports. Every database svc supports implements it, and one
// conformance suite (test/store/) holds each implementation to it. Only types come from the
// aggregates, so this file loads no Drizzle: services and `svc serve` import it before any store.
import type { Awaitable } from "../lib/awaitable.ts";
import type { PoolState, TokenChecks } from "./dialect.ts";
import type { Counts, LoadData, LoadOptions } from "../copy/load.ts";
import type { ChangeFeed } from "../realtime/events.ts";
import type { AuditStore } from "./audit.ts";
import type { CategoryStore } from "./categories.ts";
import type { CategoryEventLog } from "./category-events.ts";
import type { IdempotencyStore } from "./idempotency.ts";
import type { EmailVerificationStore } from "./email-verifications.ts";
import type { InvitationStore } from "./invitations.ts";
import type { MailOutboxStore } from "./mail-outbox.ts";
import type { MailedResetStore } from "./mailed-resets.ts";
import type { EmailChangeStore } from "./email-changes.ts";
import type { PasskeyStore } from "./passkeys.ts";
import type { IdentityStore } from "./identities.ts";
import type { PasswordResetStore } from "./resets.ts";
import type { SessionStore } from "./sessions.ts";
import type { MfaStore } from "./mfa.ts";
import type { StorageState } from "./storage.ts";
import type { ThrottleStore } from "./throttle.ts";
import type { RevocationStore, TableVersions, TokenHolder, TokenState } from "./tokens.ts";
import type { UpgradeStep } from "./upgrades.ts";
import type { UserStore } from "./users.ts";

export {
  ACCOUNT_STATUSES,
  AUDIT_FIELDS,
  CATEGORY_FIELDS,
  INVITATION_FIELDS,
  nameKey,
  REFRESH_FIELDS,
  ROLES,
  SESSION_FIELDS,
  USER_FIELDS,
  type AccountStatus,
  type Role,
} from "./records.ts";
export type { NewUser, RecordState, UserPage, UserPageBefore, UserPatch, UserRecord, UserStore } from "./users.ts";
export type { AccountChange, UserAdministration, UserFilter } from "./administration.ts";
export type { CategoryPage, CategoryPatch, CategoryRecord, CategoryStore, NewCategory } from "./categories.ts";
export type { CategoryOrder, CategoryOrderField, CategoryPosition } from "./category-ranges.ts";
export type { CategoryEventLog, LoggedChange } from "./category-events.ts";
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
export type { MfaStore } from "./mfa.ts";
export type {
  FactorCounts,
  FactorSummary,
  MfaChallengeRecord,
  PasskeyRow,
  RecoveryCodeRecord,
  TotpRecord,
} from "./mfa-records.ts";
export type {
  InvitationPage,
  InvitationRecord,
  InvitationStore,
  NewInvitation,
  RedemptionEvents,
} from "./invitations.ts";
export type { RevocationStore, TableVersions, TokenHolder, TokenStanding, TokenState } from "./tokens.ts";
export type { ThrottleRecord, ThrottleStore, ThrottleTransition } from "./throttle.ts";
export type { AuditEvent, AuditFilter, AuditStore } from "./audit.ts";
export type { MailedResetStore } from "./mailed-resets.ts";
export type { EmailChangeStore } from "./email-changes.ts";
export type { AccountTokenKind, AccountTokenRecord } from "./account-token-rows.ts";
export type { EmailVerificationStore, VerificationIssue, VerificationToken } from "./email-verifications.ts";
export type { MailKind, MailOutboxStore, OutboxFilter, OutboxMail, OutboxRecord } from "./mail-outbox.ts";
export type {
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotencyRecord,
  IdempotencyStore,
} from "./idempotency.ts";
export type {
  ChallengePurpose,
  PasskeyDeviceType,
  PasskeyRecord,
  PasskeyStore,
  WebAuthnChallengeRecord,
} from "./passkeys.ts";
export type { IdentityRecord, IdentityStore, NewIdentity, OidcCodeRecord } from "./identities.ts";
export type { Counts, LoadData, LoadOptions } from "../copy/load.ts";
export type { PoolState, TokenChecks } from "./dialect.ts";
export { DamagedDatabase, LoadRefused, NoSuchDatabase, ReferenceGone, StaleVersion } from "./store-errors.ts";

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
  /** Invitation codes for sign-up by invitation (SVC_SIGNUP=invite). */
  readonly invitations: InvitationStore;
  readonly audit: AuditStore;
  readonly idempotency: IdempotencyStore;
  /** The mails owed and sent (the outbox): written by the changes that cause them, delivered by src/mail/. */
  readonly mail: MailOutboxStore;
  /** Password resets by a mailed link (account_tokens of kind password_reset). */
  readonly mailedResets: MailedResetStore;
  /** E-mail changes confirmed by a link mailed to the new address (account_tokens of kind email_change). */
  readonly emailChanges: EmailChangeStore;
  /** E-mail verification tokens, redeemed by their owners or overridden by an administrator. */
  readonly emailVerifications: EmailVerificationStore;
  /** Second factors: authenticator apps, recovery codes, logins' second steps, sessions' amr (docs/second-factors.md). */
  readonly mfa: MfaStore;
  /** Passkeys (WebAuthn credentials) and the challenges handed out to register or sign in with one. */
  readonly passkeys: PasskeyStore;
  /** Identities at OpenID providers linked to accounts, and the one-time codes of sign-ins by code (docs/oidc.md). */
  readonly identities: IdentityStore;
  /** Tells when category changes commit, from every instance on this database. */
  readonly changes: ChangeFeed;
  /** The committed category changes, numbered in commit order: what subscriptions are fed and resume from. */
  readonly categoryEvents: CategoryEventLog;
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
  /**
   * PostgreSQL: token checks answered from memory and from the database since start (postgres/kept-reads.ts);
   * absent where every check is a local read (SQLite).
   */
  tokenChecks?(): TokenChecks;
  counts(): Promise<Counts>;
  /**
   * Writes the records exactly as given (ids, hashes, token versions, timestamps) in one transaction.
   * Throws, leaving the store as it was, when the store is not empty and `replace` is false, or when
   * the counts afterwards differ from `expect`.
   */
  load(data: LoadData, options: LoadOptions): Promise<Counts>;
  close(): Promise<void>;
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
  /**
   * Resolves once this instance has heard every change committed before the call, by any instance
   * (PostgreSQL keeps the two reads above in memory, right within SVC_DB_STALENESS); absent where
   * nothing is kept.
   */
  settled?(): Promise<void>;
}

export interface OpenOptions {
  /**
   * Only an svc database that already exists (every command but serve and migrate): a missing file,
   * an in-memory database or one without svc's tables is NoSuchDatabase, and nothing is created. It
   * is not migrated: one an earlier svc migrated is BehindDatabase (an older svc may be serving it).
   * Either way, one a later svc migrated is NewerDatabase.
   */
  existing?: boolean;
  /** Told where SQLite's log, left from a database that was gone, was moved before a new one was made (setAsideNotice). */
  onSetAside?: (moved: readonly string[]) => void;
  /** Told of each step of bringing the database up to this binary (without `existing`): the snapshot before, each migration applied. */
  onUpgrade?: (step: UpgradeStep) => void;
}

/** What svc says when it has set aside a log left from a database that was gone (sqlite/connection.ts). */
export function setAsideNotice(moved: readonly string[]): string {
  return `the database file was missing but not its write-ahead log or journal: left from a database that is gone, it was set aside (${moved.join(", ")}) and a new, empty database made`;
}
