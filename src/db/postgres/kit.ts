// PostgreSQL's kit for the table declarations (../schema/): native uuid, timestamptz(3) for instants
// (instant.ts), bigints where a number outgrows integer; and svc's tables made with it, in PostgreSQL's types.
import type { BuildColumns, ColumnBuilderBase } from "drizzle-orm";
import { bigint, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import type { PgTableWithColumns } from "drizzle-orm/pg-core";
import { declareTables, type DeclaredTables } from "../schema/index.ts";
import { kit, seen, type Declaration } from "../schema/kit.ts";
import { instant } from "./instant.ts";

const pgKit = kit(
  { table: pgTable, index, uniqueIndex, primaryKey },
  {
    id: (name) => seen(uuid(name)),
    text: (name) => seen(text(name)),
    instant: (name) => seen(instant(name)),
    integer: (name) => seen(integer(name)),
    // Unsigned 32-bit values pass integer's 2^31-1; a bigint holds them, read as a number (they fit).
    counter: (name) => seen(bigint(name, { mode: "number" })),
    // The category events' number: its sequence's next value, taken under a lock by the triggers that write them.
    serial: (name) => seen(bigint(name, { mode: "number" }).primaryKey().generatedByDefaultAsIdentity()),
  },
);

/** A declared table in PostgreSQL's types. */
type PgTable<Declared> =
  Declaration<Declared> extends {
    name: infer Name extends string;
    columns: infer Columns extends Record<string, ColumnBuilderBase>;
  }
    ? PgTableWithColumns<{ name: Name; schema: undefined; columns: BuildColumns<Name, Columns, "pg">; dialect: "pg" }>
    : never;

/** svc's tables: made by PostgreSQL's builders, so in PostgreSQL's types, worked out from what each declares. */
export const pgTables = declareTables(pgKit) as unknown as {
  [Key in keyof DeclaredTables]: PgTable<DeclaredTables[Key]>;
};
