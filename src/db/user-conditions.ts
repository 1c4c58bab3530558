// The conditions a write to a user's row is held to: the token's version, and the record a client saw.
// Apart from users.ts so that administration.ts, whose contract users.ts's extends, uses them too.
import { and, eq, isNull, type SQL } from "drizzle-orm";
import type { Tables } from "./dialect.ts";
import type { RecordState } from "./records.ts";

/** The user's row while it still holds what a client saw. */
export function unchangedSince({ users }: Tables, state: RecordState & { lastLoginAt?: string | null }): SQL {
  return and(
    eq(users.username, state.username),
    eq(users.email, state.email),
    eq(users.role, state.role),
    eq(users.status, state.status),
    eq(users.updatedAt, state.updatedAt),
    ...(state.lastLoginAt === undefined
      ? []
      : [state.lastLoginAt === null ? isNull(users.lastLoginAt) : eq(users.lastLoginAt, state.lastLoginAt)]),
  )!;
}

/** The user with this id, and with a token version, only while it is still that one. */
export function userAtVersion({ users }: Tables, id: string, tokenVersion: number | undefined) {
  return tokenVersion === undefined ? eq(users.id, id) : and(eq(users.id, id), eq(users.tokenVersion, tokenVersion));
}
