// What svc's records are made of, as values any module may import without loading Drizzle (services,
// the CLI, `svc serve` before its store has loaded): the values of each enumeration, the fields of
// each record in the names both dialects' tables give their columns, and the key a name's uniqueness
// is decided on.
import type { AuditEvent } from "./audit.ts";
import type { CategoryRecord } from "./categories.ts";
import type { InvitationRecord } from "./invitations.ts";
import type { RefreshTokenRecord, SessionRecord } from "./sessions.ts";
import type { UserRecord } from "./users.ts";

export type Role = "user" | "admin";
export type AccountStatus = "active" | "disabled";
export const ROLES: readonly Role[] = ["user", "admin"];
export const ACCOUNT_STATUSES: readonly AccountStatus[] = ["active", "disabled"];

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
