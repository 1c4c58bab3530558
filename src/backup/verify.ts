// Whether a snapshot is one to count on: SQLite's full integrity check and foreign keys (src/db/check.ts,
// as `svc check` runs them), svc's tables there, each of them read to its last row. Its row counts say
// what it holds.
import { Database } from "bun:sqlite";
import { checkSqlite } from "../db/check.ts";
import { describeError } from "../errors/safe-errors.ts";

/** What a snapshot holds, as `svc restore` reports it. */
export interface SnapshotCounts {
  users: number;
  categories: number;
  sessions: number;
  auditEvents: number;
}

/** The problems of the SQLite file at `path` as a snapshot (none: sound), and, when sound, what it holds. */
export function verifySnapshot(path: string): { problems: string[]; counts: SnapshotCounts | null } {
  const problems = checkSqlite(path, { current: false });
  if (problems.length > 0) return { problems, counts: null };
  const client = new Database(path, { readonly: true });
  try {
    const svc = client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'users'").get();
    if (!svc) return { problems: ["not an svc database (it has no svc tables)"], counts: null };
    const tables = client
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all();
    // Every row of every table, not an index's count: a table's own pages are what a restore hands back.
    for (const { name } of tables) client.run(`SELECT count(*) FROM (SELECT * FROM "${name}")`);
    const count = (table: string) => client.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
    const counts = {
      users: count("users"),
      categories: count("categories"),
      sessions: count("sessions"),
      auditEvents: count("audit_events"),
    };
    return { problems: [], counts };
  } catch (error) {
    return { problems: [describeError(error)], counts: null };
  } finally {
    client.close();
  }
}
