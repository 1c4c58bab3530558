// WHERE conditions both dialects' stores build alike: Drizzle's operators take either's columns.
import { and, eq, type Column } from "drizzle-orm";

/** The user with this id, and when a token version is given, only while it is still that one. */
export function heldAt(users: { id: Column; tokenVersion: Column }, id: string, tokenVersion: number | undefined) {
  return tokenVersion === undefined ? eq(users.id, id) : and(eq(users.id, id), eq(users.tokenVersion, tokenVersion));
}
