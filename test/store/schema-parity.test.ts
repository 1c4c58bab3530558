// The SQLite and PostgreSQL schemas must describe the same tables, columns and indexes.
import { describe, expect, test } from "bun:test";
import { getTableConfig as pgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTable } from "drizzle-orm/sqlite-core";
import * as pg from "../../src/db/postgres/schema.ts";
import * as sqlite from "../../src/db/sqlite/schema.ts";

type Shape = { name: string; columns: string[]; indexes: string[]; foreignKeys: number };

function shape(config: {
  name: string;
  columns: { name: string; notNull: boolean; primary: boolean }[];
  indexes: { config: { name?: string; unique: boolean } }[];
  foreignKeys: unknown[];
}): Shape {
  return {
    name: config.name,
    columns: config.columns.map((c) => `${c.name}${c.primary ? " pk" : ""}${c.notNull ? " not null" : ""}`).sort(),
    indexes: config.indexes.map((i) => `${i.config.name}${i.config.unique ? " unique" : ""}`).sort(),
    foreignKeys: config.foreignKeys.length,
  };
}

describe("schema parity", () => {
  test("both dialects export the same tables", () => {
    expect(Object.keys(pg).sort()).toEqual(Object.keys(sqlite).sort());
  });

  for (const name of Object.keys(sqlite) as Array<keyof typeof sqlite>) {
    test(`${name}: same columns, nullability, keys and indexes`, () => {
      expect(shape(pgTable(pg[name]))).toEqual(shape(sqliteTable(sqlite[name])));
    });
  }
});
