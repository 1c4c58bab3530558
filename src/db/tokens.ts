// Tokens: those revoked one by one (logout), and the check every authenticated request makes of its
// token (revoked? until when?) read in one statement with the table versions the cache layer keys on.
import { eq, lt, sql, type SQL } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import type { Dialect, HotReads } from "./dialect.ts";
import { first } from "./rows.ts";
import type { TableVersions, TokenStanding, UserRecord } from "./records.ts";

export type { TableVersions, TokenStanding, TokenState } from "./records.ts";

/** Single tokens revoked before their expiry (logout). Every instance sees the same list. */
export interface RevocationStore {
  /** Revokes the token id until expiresAt, and forgets revocations whose tokens have expired. (Store.tokenHolder reads them.) */
  revoke(jti: string, expiresAt: string): Promise<void>;
}

/** The user a token names, whether that token was revoked, and when its session ends. */
export interface TokenHolder extends TokenStanding {
  user: UserRecord;
}

/** A well-formed id no session has (the nil UUID), for a session id that is not an id at all. */
const NO_SESSION = "00000000-0000-0000-0000-000000000000";

/** The token check and the table versions: ids parsed here, the reads the dialect's own. */
export function tokenReads(dialect: Dialect): HotReads {
  const reads = dialect.hotReads;
  return {
    tokenState(userId, jti, sessionId) {
      const id = parseId(userId);
      if (!id) return null;
      if (sessionId === undefined) return reads.tokenState(id, jti);
      // A session id that cannot be one names no session of the user: the token is revoked.
      const session = parseId(sessionId);
      return reads.tokenState(id, jti, session ?? NO_SESSION);
    },
    versions: reads.versions,
  };
}

/** The reads of every authenticated request, as prepared Drizzle queries (PostgreSQL keeps their answers: postgres/kept-reads.ts). */
export function hotReads({ db, run, tables }: Pick<Dialect, "db" | "run" | "tables">): HotReads {
  const { users, revokedTokens, sessions, tableVersions } = tables;
  const p = sql.placeholder;
  const version = (table: keyof TableVersions) =>
    sql<number>`(select ${tableVersions.version} from ${tableVersions} where ${tableVersions.name} = ${table})`.mapWith(
      Number,
    );
  const state = <T>(standing: SQL<T>, name: string) =>
    db
      .select({ standing, users: version("users"), categories: version("categories") })
      .from(users)
      .where(eq(users.id, p("id")))
      .prepare(name);
  // A token with a session is revoked by the session's end, and serves until its expires_at; one from
  // before sessions is revoked by its jti.
  const byJti = state(
    sql<boolean>`exists (select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${p("jti")})`.mapWith(Boolean),
    "token_state",
  );
  // The user id as a parameter again: Drizzle writes columns in a selected expression unqualified.
  const sessionExpiry = sql<string | null>`(select ${sessions.expiresAt} from ${sessions}
    where ${sessions.id} = ${p("sid")} and ${sessions.userId} = ${p("id")})`;
  const bySession = state(sessionExpiry.mapWith(sessions.expiresAt), "session_token_state");
  const versions = db
    .select({ name: tableVersions.name, version: tableVersions.version })
    .from(tableVersions)
    .prepare("table_versions");
  return {
    tokenState: (id, jti, sid) =>
      run(async () => {
        if (sid === undefined) {
          const row = first(await byJti.execute({ id, jti }));
          return row && { revoked: row.standing, expiresAt: null, versions: versionsOf(row) };
        }
        const row = first(await bySession.execute({ id, sid }));
        return row && { revoked: row.standing === null, expiresAt: row.standing, versions: versionsOf(row) };
      }),
    versions: () =>
      run(async () => {
        const rows = await versions.execute();
        const of = (name: keyof TableVersions) => rows.find((row) => row.name === name)?.version ?? 0;
        return { users: of("users"), categories: of("categories") };
      }),
  };
}

/** The table versions a token state's row carries beside the standing. */
const versionsOf = (row: TableVersions): TableVersions => ({ users: row.users, categories: row.categories });

export function revocationStore({ db, write, tables }: Dialect): RevocationStore {
  const { revokedTokens } = tables;
  return {
    revoke: (jti, expiresAt) =>
      write(async () => {
        await db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, new Date().toISOString()));
        await db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing();
      }),
  };
}
