// Whether an SQLite database's schema is the one svc's migrations make: no table, view, index or trigger
// svc never made, none of its own changed or missing. A trigger planted in a snapshot would otherwise
// run inside svc's own transactions once restored (making every sign-up an administrator, say), and
// outlive every later backup. The expected schema is made, not listed: the migrations the database
// records, applied to an empty database in memory, so a snapshot an earlier svc took is held to what
// that svc made, and a migration added later needs no list kept in step.
import { Database } from "bun:sqlite";
import { version } from "../../../package.json";
import { RECORDED_MIGRATIONS } from "../upgrades.ts";
import { applyMigrations, latestCreatedAt } from "./apply-migrations.ts";
import { MIGRATIONS } from "./migrate.ts";

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** SQLite's own bookkeeping, made as it sees fit (AUTOINCREMENT, ANALYZE): never svc's to judge. */
const SQLITE_OWN = /^sqlite_(sequence|stat[1-4])$/;
/** svc 0.1.1 and before kept no record of their migrations beside Drizzle's: its absence (and its index's) is theirs. */
const MAY_LACK = new Set([RECORDED_MIGRATIONS]);

/** The schemas svc's migrations make, by how many of them are applied: made once each. */
const expected = new Map<number, Map<string, SchemaObject>>();

/**
 * The first way the database's schema differs from what svc's migrations (those it records) make, as
 * one line; null when it is svc's own.
 */
export function schemaProblem(client: Database): string | null {
  const latest = latestCreatedAt(client);
  const applied = MIGRATIONS.filter((m) => latest !== null && m.folderMillis <= latest).length;
  const svc = expectedSchema(applied);
  const found = objects(client);
  for (const object of found.values()) {
    const own = svc.get(key(object));
    if (!own) return `it holds ${described(object)}, which svc does not make`;
    if (normalised(own.sql) !== normalised(object.sql)) return `its ${described(object)} is not as svc makes it`;
  }
  for (const object of svc.values())
    if (!found.has(key(object)) && !MAY_LACK.has(object.tbl_name))
      return `it lacks ${described(object)}, which svc makes`;
  return null;
}

function expectedSchema(applied: number): Map<string, SchemaObject> {
  let schema = expected.get(applied);
  if (!schema) {
    const client = new Database(":memory:");
    try {
      applyMigrations(client, MIGRATIONS.slice(0, applied), version);
      schema = objects(client);
    } finally {
      client.close();
    }
    expected.set(applied, schema);
  }
  return schema;
}

/** Every object of the main schema but SQLite's own bookkeeping, in the order sqlite_master holds them. */
function objects(client: Database): Map<string, SchemaObject> {
  const rows = client
    .query<SchemaObject, []>("SELECT type, name, tbl_name, sql FROM main.sqlite_master ORDER BY rowid")
    .all();
  return new Map(rows.filter((row) => !SQLITE_OWN.test(row.name)).map((row) => [key(row), row]));
}

const key = (object: SchemaObject) => `${object.type} ${object.name} ${object.tbl_name}`;

function described({ type, name, tbl_name }: SchemaObject): string {
  return `${type} ${JSON.stringify(name)}${type === "trigger" ? ` on ${tbl_name}` : ""}`;
}

/**
 * The statement as SQLite keeps it (its text as written, less IF NOT EXISTS), without what may differ
 * between writers of the same schema: quotes, spacing (Drizzle's migrator wrote its table over several
 * lines, svc on one), case.
 */
function normalised(sql: string | null): string {
  return (sql ?? "")
    .replace(/["`[\]]/g, "")
    .replace(/\s+/g, " ")
    .replace(/ ?([(),;=]) ?/g, "$1")
    .trim()
    .toLowerCase();
}
