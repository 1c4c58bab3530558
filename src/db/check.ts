// `svc check`: what is wrong with the database SVC_DATABASE_URL names, without changing it. SQLite:
// its full integrity and foreign-key checks; PostgreSQL: that svc's tables are there, migrated, and
// that every row of them reads; on both, that the schema is only what svc's migrations make. Each
// problem is one line; none means sound.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { dirname, resolve } from "node:path";
import { getTableConfig } from "drizzle-orm/pg-core";
import type { DatabaseConfig } from "../config/index.ts";
import { describeError } from "../errors/safe-errors.ts";
import { describeDatabase } from "./describe.ts";
import { behindPostgres } from "./postgres/migrate.ts";
import { postgresSchemaProblem } from "./postgres/schema-check.ts";
import * as pgTables from "./postgres/schema.ts";
import { behindSqlite } from "./sqlite/migrate.ts";
import { schemaProblem } from "./sqlite/schema-check.ts";
import { integrityProblems, isDamage, missingSqlite } from "./sqlite/file.ts";
import { volumeFull } from "./storage.ts";

/** Problems reported, at most: past it, restoring from a backup is the answer anyway. */
const MAX_PROBLEMS = 20;
/** Every table of svc's schema, read from the schema itself so that a table added later is checked too. */
const TABLES = Object.values(pgTables).map((table) => getTableConfig(table).name);

export async function checkDatabase(database: DatabaseConfig): Promise<string[]> {
  return database.kind === "sqlite"
    ? checkSqlite(database.path)
    : checkPostgres(database.url, describeDatabase(database));
}

/**
 * The SQLite file's problems. `current`: a database serving this svc must have every migration applied;
 * a snapshot need not (an older svc took it, and the next start migrates it).
 */
export function checkSqlite(path: string, { current = true }: { current?: boolean } = {}): string[] {
  const missing = missingSqlite(path);
  if (missing) return [missing];
  let client: Database;
  try {
    client = new Database(path, { readonly: true });
  } catch (error) {
    return [volumeFull(resolve(dirname(path)), error)?.message ?? `cannot open ${path}: ${describeError(error)}`];
  }
  try {
    // As every command: a database a later svc migrated is that svc's to judge (the one line says so).
    const behind = behindSqlite(client, path);
    const problems = wholeCheck(client);
    if (problems.length > 0) return problems;
    // Read whole and sound: now whether it is only what svc made (a planted trigger would run in svc's transactions).
    const schema = schemaProblem(client);
    if (schema) return [schema];
    if (current && behind) problems.push(behind.message);
    const orphans = client.query<{ table: string; rowid: number }, []>("PRAGMA foreign_key_check").all();
    for (const orphan of orphans.slice(0, MAX_PROBLEMS))
      problems.push(`${orphan.table} row ${orphan.rowid} names a row that does not exist`);
    return problems;
  } catch (error) {
    // A full disk stops the check before it has read the pages: said as such, never as damage.
    return [volumeFull(resolve(dirname(path)), error)?.message ?? describeError(error)];
  } finally {
    client.close();
  }
}

/**
 * integrity_check; some damage makes it (and a long quick_check) stop with "malformed" instead of a
 * report, and then the first problem quick_check finds says where.
 */
function wholeCheck(client: Database): string[] {
  try {
    return integrityProblems(client, "integrity_check", MAX_PROBLEMS);
  } catch (error) {
    // Only what SQLite found wrong with the pages is the file's problem; a full disk or an I/O error is not.
    if (!isDamage(error)) throw error;
    try {
      return integrityProblems(client, "quick_check", 1);
    } catch {
      return [describeError(error)];
    }
  }
}

async function checkPostgres(url: string, name: string): Promise<string[]> {
  const client = new SQL({ url, max: 1, connectionTimeout: 5 });
  try {
    const [{ svc }] = await client`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS svc`;
    if (!svc) return ["not an svc database (it has no svc tables)"];
    // Behind, it lacks tables its migrations will make: the one line says what to do first.
    const behind = await behindPostgres(client, name);
    if (behind) return [behind.message];
    const problems: string[] = [];
    // A full read of each table: a damaged page fails it (with data checksums on, so does a flipped bit).
    for (const table of TABLES) {
      try {
        await client.unsafe(`SELECT count(*) FROM (SELECT * FROM ${table}) AS every_row`);
      } catch (error) {
        problems.push(`${table} cannot be read: ${describeError(error)}`);
      }
    }
    if (problems.length > 0) return problems;
    // Every table read: now whether the schema is only what svc made (a planted trigger would run in svc's transactions).
    const schema = await postgresSchemaProblem(client);
    return schema ? [schema] : [];
  } catch (error) {
    return [describeError(error)];
  } finally {
    await client.close();
  }
}
