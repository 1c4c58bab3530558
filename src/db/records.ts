// What svc's records are made of, as values any module may import without loading Drizzle (services,
// the CLI, `svc serve` before its store has loaded): the values of each enumeration, the fields of
// each record in the names both dialects' tables give their columns, and the key a name's uniqueness
// is decided on; and the records themselves, which the aggregates' files re-export.
import type { AuditAction } from "../audit/actions.ts";

export type Role = "user" | "admin";
export type AccountStatus = "active" | "disabled";
export const ROLES: readonly Role[] = ["user", "admin"];
export const ACCOUNT_STATUSES: readonly AccountStatus[] = ["active", "disabled"];

/**
 * The password hash of an account that has no password (one made by a sign-in through an OpenID provider,
 * until its owner sets one): no hash verifies against it, and passwords.ts never tries.
 */
export const NO_PASSWORD = "";

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
  /** When the address was shown to be the owner's (a mailed link redeemed, or an administrator); null: never. */
  emailVerifiedAt: string | null;
}

export interface SessionRecord {
  id: string;
  userId: string;
  createdAt: string;
  /** The last login or refresh. */
  lastUsedAt: string;
  /** When its newest refresh token expires, never past its absolute limit: the session ends then. */
  expiresAt: string;
  userAgent: string | null;
  clientAddress: string | null;
  /** How the session signed in: RFC 8176's names, comma-separated ("pwd", "pwd,otp", "hwk"). */
  amr: string;
  /** When a second factor was last shown in it (its login or a step-up); null: never. */
  mfaAt: string | null;
}

/** A refresh token as stored: its SHA-256 digest, never the token. */
export interface RefreshTokenRecord {
  digest: string;
  sessionId: string;
  expiresAt: string;
  /** null: the session's current token. */
  rotatedAt: string | null;
  /** The answer its rotation gave, sealed with a key derived from the token itself (null until rotated). */
  successor: string | null;
}

export interface CategoryRecord {
  id: string;
  name: string;
  description: string | null;
  /** "#RRGGBB", upper case. */
  colorHex: string;
  icon: string | null;
  /** null once the creator is deleted, or when created without authentication. */
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** 1 when created, one more with every update. */
  version: number;
}

/** An invitation as listed: never its code, nor the code's digest. */
export interface InvitationRecord {
  id: string;
  /** Lower case; null: whoever holds the code may sign up with any address. */
  email: string | null;
  /** The administrator who issued it; null: the CLI. */
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
  /** null: not redeemed. */
  usedAt: string | null;
  /** The account its redemption made (its id stays after that account is deleted). */
  usedBy: string | null;
}

export interface AuditEvent {
  /** UUIDv7 from `at`: id order is time order. */
  id: string;
  at: string;
  action: AuditAction;
  actorId: string | null;
  targetId: string | null;
  clientAddress: string | null;
  requestId: string | null;
  outcome: "success" | "failure";
  /** A JSON object of non-secret particulars, or null. */
  detail: string | null;
}

export type NewRefreshToken = Pick<RefreshTokenRecord, "digest" | "expiresAt">;

/** Rotating a refresh token: when, the successor token, and the answer sealed for replays. */
export interface Rotation {
  at: string;
  successor: NewRefreshToken;
  sealed: string;
}

/** Whether a token was revoked, and until when it may serve. */
export interface TokenStanding {
  revoked: boolean;
  /**
   * The expires_at of the token's session while it has one; null for a token without a session, or one
   * revoked. Given, not judged: whoever checks the token compares it with their clock, so an answer kept
   * in memory stays right as time passes.
   */
  expiresAt: string | null;
}

/** Counters that change whenever their table does, whichever instance wrote (database triggers). */
export interface TableVersions {
  users: number;
  categories: number;
}

/** A token's standing and the table versions, read in one statement. */
export interface TokenState extends TokenStanding {
  versions: TableVersions;
}

/** The values a client saw, for writes conditional on them (If-Match). */
export type RecordState = Pick<UserRecord, "username" | "email" | "role" | "status" | "updatedAt">;

export interface UserPage {
  limit: number;
  /** Only users whose id sorts after this one (keyset paging). */
  after?: string;
}

/** A page of the user list walked backwards: the last `limit` users whose id sorts before `before`. */
export interface UserPageBefore {
  limit: number;
  before: string;
}

/** The fields of each record, in the names both dialects' tables use for their columns. */
export const USER_FIELDS = [
  "id",
  "username",
  "email",
  "passwordHash",
  "tokenVersion",
  "createdAt",
  "updatedAt",
  "role",
  "status",
  "lastLoginAt",
  "emailVerifiedAt",
] as const satisfies readonly (keyof UserRecord)[];
export const AUDIT_FIELDS = [
  "id",
  "at",
  "action",
  "actorId",
  "targetId",
  "clientAddress",
  "requestId",
  "outcome",
  "detail",
] as const satisfies readonly (keyof AuditEvent)[];
export const SESSION_FIELDS = [
  "id",
  "userId",
  "createdAt",
  "lastUsedAt",
  "expiresAt",
  "userAgent",
  "clientAddress",
  "amr",
  "mfaAt",
] as const satisfies readonly (keyof SessionRecord)[];
export const REFRESH_FIELDS = [
  "digest",
  "sessionId",
  "expiresAt",
  "rotatedAt",
  "successor",
] as const satisfies readonly (keyof RefreshTokenRecord)[];
export const CATEGORY_FIELDS = [
  "id",
  "name",
  "description",
  "colorHex",
  "icon",
  "createdBy",
  "createdAt",
  "updatedAt",
  "version",
] as const satisfies readonly (keyof CategoryRecord)[];

export const INVITATION_FIELDS = [
  "id",
  "email",
  "createdBy",
  "createdAt",
  "expiresAt",
  "usedAt",
  "usedBy",
] as const satisfies readonly (keyof InvitationRecord)[];

/** The key uniqueness is decided on: case and surrounding space do not make a name new. */
export function nameKey(name: string): string {
  return name.trim().normalize("NFC").toLowerCase();
}
