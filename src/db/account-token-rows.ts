// The one-time tokens a mail carries (account_tokens), as the reset and e-mail change stores read them:
// by digest and kind, live or expired, so that each answer names which.
import { and, eq, inArray, lt } from "drizzle-orm";
import { NIL, parseId } from "../lib/ids.ts";
import type { Db, Dialect, Tables } from "./dialect.ts";
import { pruneWhere } from "./rows.ts";

export type AccountTokenKind = "email_verification" | "password_reset" | "email_change";

/** A mailed token as stored: its SHA-256 digest, never the token. */
export interface AccountTokenRecord {
  digest: string;
  kind: AccountTokenKind;
  userId: string;
  /** The address it was sent to. */
  email: string;
  createdAt: string;
  expiresAt: string;
}

/** What a digest names: no token of this kind (unknown, spent, replaced or of another kind), an expired one, or the token. */
export type TokenLookup = "invalid" | "expired" | AccountTokenRecord;

export async function tokenIn(tx: Db, { accountTokens }: Tables, digest: string, kind: AccountTokenKind, at: string) {
  const [row] = await tx
    .select()
    .from(accountTokens)
    .where(and(eq(accountTokens.digest, digest), eq(accountTokens.kind, kind)));
  if (!row) return "invalid" as const;
  return row.expiresAt <= at ? ("expired" as const) : (row as AccountTokenRecord);
}

/**
 * Locks the user's row until the transaction ends, so that writers of the user's tokens take turns. On
 * PostgreSQL, under READ COMMITTED, two transactions that each delete the user's tokens of a kind and insert
 * one see none of the other's: both tokens stayed live. SQLite runs one writing transaction at a time. A user
 * id that is none (the nil UUID) locks nothing, by the same statement.
 */
export async function lockUserIn(
  tx: Db,
  { kind, tables: { users } }: Pick<Dialect, "kind" | "tables">,
  userId: string,
) {
  if (kind !== "postgres") return;
  // NO KEY UPDATE, as an update of the row's other columns takes: rows that refer to the user may still be written.
  await tx
    .select({ id: users.id })
    .from(users)
    .where(eq(users.id, parseId(userId) ?? NIL))
    .for("no key update");
}

/**
 * Replaces the user's earlier tokens of the token's kind by it, the user's row locked first (lockUserIn). A user
 * id that is none (the nil UUID) replaces nothing.
 */
export async function replaceTokensIn(
  tx: Db,
  dialect: Pick<Dialect, "kind" | "tables">,
  userId: string,
  token: AccountTokenRecord | null,
) {
  const { accountTokens } = dialect.tables;
  const kind = token?.kind ?? "password_reset";
  await lockUserIn(tx, dialect, userId);
  await tx
    .delete(accountTokens)
    .where(and(eq(accountTokens.userId, parseId(userId) ?? NIL), eq(accountTokens.kind, kind)));
  if (token) await tx.insert(accountTokens).values(token);
}

/** Deletes the token: the compare-and-set by which, of concurrent redemptions, one lands. */
export async function spendIn(tx: Db, { accountTokens }: Tables, digest: string): Promise<boolean> {
  return (await tx.delete(accountTokens).where(eq(accountTokens.digest, digest)).returning()).length > 0;
}

/**
 * What a new password ends: the user's pending e-mail change and reset links, so that whoever asked for
 * them with the old password (or a stolen session) cannot finish after the owner took the account back.
 * A verification link may stay: it verifies the account's own address only.
 */
export const PASSWORD_ENDS: readonly AccountTokenKind[] = ["email_change", "password_reset"];

/** Deletes the user's tokens of these kinds, in the caller's transaction. */
export async function dropTokensIn(
  tx: Db,
  { accountTokens }: Tables,
  userId: string,
  kinds: readonly AccountTokenKind[],
) {
  await tx.delete(accountTokens).where(and(eq(accountTokens.userId, userId), inArray(accountTokens.kind, [...kinds])));
}

/**
 * What a new address ends: the links mailed to the old one. A reset link there would hand the account back
 * to whoever reads the old mailbox, and a verification link there verifies nothing of the new address.
 */
export const ADDRESS_ENDS: readonly AccountTokenKind[] = ["password_reset", "email_verification"];

/** Forgets up to `limit` tokens of this kind expired at `now`, in short statements of their own; how many went. */
export async function pruneTokens(
  db: Db,
  { accountTokens }: Tables,
  kind: AccountTokenKind,
  now: string,
  limit: number,
) {
  const expired = and(eq(accountTokens.kind, kind), lt(accountTokens.expiresAt, now));
  return pruneWhere(db, accountTokens, accountTokens.digest, expired, limit);
}
