// Whether svc's PostgreSQL schema holds only what svc's migrations make: no table, view, index, sequence,
// trigger or function svc never made, none of its own changed or missing (a planted trigger would run
// inside svc's transactions). The expected schema is made, not listed: the migrations applied to a
// scratch schema inside a transaction that is then rolled back, so nothing is left and nothing changes.
// Objects an extension owns are the extension's (pg_stat_statements and the like live in public too).
import type { SQL } from "bun";
import { MIGRATIONS } from "./migrate.ts";

interface SchemaObject {
  type: string;
  name: string;
  on: string | null;
  definition: string | null;
}

/** The rollback that leaves the scratch schema unmade, carrying what was read from it. */
class Made extends Error {
  constructor(readonly objects: SchemaObject[]) {
    super("rolled back");
  }
}

/** The first way the schema svc's tables live in differs from what its migrations make, as one line; null when svc's own. */
export async function postgresSchemaProblem(client: SQL): Promise<string | null> {
  const [{ schema }] = await client`SELECT current_schema() AS schema`;
  const found = keyed(await objects(client, schema), schema);
  const svc = keyed(await expectedObjects(client), SCRATCH);
  for (const [key, object] of found) {
    const own = svc.get(key);
    if (!own) return `it holds ${described(object)}, which svc does not make`;
    if (own.definition !== object.definition) return `its ${described(object)} is not as svc makes it`;
  }
  for (const [key, object] of svc) if (!found.has(key)) return `it lacks ${described(object)}, which svc makes`;
  return null;
}

/** The scratch schema's name: unlikely to clash, and never committed. */
const SCRATCH = "svc_check_expected";

async function expectedObjects(client: SQL): Promise<SchemaObject[]> {
  try {
    await client.begin(async (tx) => {
      await tx.unsafe(`CREATE SCHEMA ${SCRATCH}`);
      await tx.unsafe(`SET LOCAL search_path = ${SCRATCH}`);
      for (const migration of MIGRATIONS)
        for (const statement of migration.sql) await tx.unsafe(statement.replaceAll('"public".', `"${SCRATCH}".`));
      throw new Made(await objects(tx, SCRATCH));
    });
  } catch (error) {
    if (error instanceof Made) return error.objects;
    throw error;
  }
  throw new Error("the scratch schema's transaction ended without its objects");
}

/** Every table, view, index, sequence, trigger and function in `schema` that no extension owns. */
async function objects(client: SQL, schema: string): Promise<SchemaObject[]> {
  return (await client.unsafe(
    `SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
              WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 'f' THEN 'foreign table' ELSE c.relkind::text END AS type,
            c.relname AS name, NULL AS on,
            CASE c.relkind WHEN 'v' THEN pg_get_viewdef(c.oid) WHEN 'm' THEN pg_get_viewdef(c.oid)
              WHEN 'i' THEN pg_get_indexdef(c.oid) END AS definition
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'i', 'S', 'f')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
     UNION ALL
     SELECT 'trigger', t.tgname, c.relname, pg_get_triggerdef(t.oid)
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND NOT t.tgisinternal
     UNION ALL
     SELECT 'function', p.proname, NULL, pg_get_functiondef(p.oid)
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`,
    [schema],
  )) as SchemaObject[];
}

/** By kind, name and table, each definition with its schema's name taken out (the scratch one's is not public's). */
function keyed(list: SchemaObject[], schema: string): Map<string, SchemaObject> {
  const qualified = new RegExp(`\\b"?${schema}"?\\.`, "g");
  return new Map(
    list.map((object) => [
      `${object.type} ${object.name} ${object.on ?? ""}`,
      { ...object, definition: object.definition?.replace(qualified, "") ?? null },
    ]),
  );
}

function described({ type, name, on }: SchemaObject): string {
  return `${type} ${JSON.stringify(name)}${on ? ` on ${on}` : ""}`;
}
