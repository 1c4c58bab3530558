// SQLite's kit for the table declarations (../schema/): text for ids and instants (ISO-8601 UTC text, so
// string order is time order), integer for every number; and svc's tables made with it, in SQLite's types.
import type { BuildColumns, ColumnBuilderBase } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { SQLiteTableWithColumns } from "drizzle-orm/sqlite-core";
import { declareTables, type DeclaredTables } from "../schema/index.ts";
import { kit, seen, type Declaration } from "../schema/kit.ts";

const sqliteKit = kit(
  { table: sqliteTable, index, uniqueIndex, primaryKey },
  {
    id: (name) => seen(text(name)),
    text: (name) => seen(text(name)),
    instant: (name) => seen(text(name)),
    integer: (name) => seen(integer(name)),
    counter: (name) => seen(integer(name)),
    serial: (name) => seen(integer(name).primaryKey({ autoIncrement: true })),
  },
);

/** A declared table in SQLite's types. */
type SqliteTable<Declared> =
  Declaration<Declared> extends {
    name: infer Name extends string;
    columns: infer Columns extends Record<string, ColumnBuilderBase>;
  }
    ? SQLiteTableWithColumns<{
        name: Name;
        schema: undefined;
        columns: BuildColumns<Name, Columns, "sqlite">;
        dialect: "sqlite";
      }>
    : never;

/** svc's tables: made by SQLite's builders, so in SQLite's types, worked out from what each declares. */
export const sqliteTables = declareTables(sqliteKit) as unknown as {
  [Key in keyof DeclaredTables]: SqliteTable<DeclaredTables[Key]>;
};
