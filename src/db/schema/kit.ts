// What the table declarations (accounts.ts, bookkeeping.ts, ...) are written with: the kinds of column svc
// uses, which each database's kit (sqlite/kit.ts, postgres/kit.ts) makes with its own builders. The
// declarations see one type per kind, carrying all Drizzle infers rows from (the value, not null, a
// default, the primary key); each database's kit gives the tables back in its own types, so the store's
// queries are typed as on tables written for that database.
import type { AnyColumn, ColumnBuilder, ColumnBuilderBase, HasDefault, IsPrimaryKey, NotNull } from "drizzle-orm";

/** A column being declared: the value it holds, and its name in the database. */
export interface DeclaredColumn<Data = unknown, Name extends string = string>
  extends ColumnBuilder<{
    name: Name;
    dataType: Data extends number ? "number" : "string";
    columnType: string;
    data: Data;
    driverParam: unknown;
    enumValues: undefined;
  }> {
  /** A foreign key: the row goes with (cascade), or forgets (set null), the row it names. */
  references(column: () => AnyColumn, actions?: { onDelete?: "cascade" | "set null" }): this;
}

/** A primary key the database numbers, increasing and never reused. */
export type Serial<Name extends string> = HasDefault<IsPrimaryKey<NotNull<DeclaredColumn<number, Name>>>>;

type Columns = Record<string, ColumnBuilderBase>;

declare const declared: unique symbol;

/** A table declared: its columns by key (for references and indexes), and what its database's type is made of. */
export type DeclaredTable<Name extends string = string, Declared extends Columns = Columns> = {
  [Key in keyof Declared]: AnyColumn;
} & { readonly [declared]: { name: Name; columns: Declared } };

/** What a declared table's type in its database is made of: its name and its columns. */
export type Declaration<Table> = Table extends { readonly [declared]: infer Made } ? Made : never;

/** An index, a unique index or a composite primary key, as a table's extras list them. */
export interface Extra {
  readonly [declared]: "extra";
}

interface IndexOn {
  on(...columns: [AnyColumn, ...AnyColumn[]]): Extra;
}

/** The kinds of column, each made with a database's own builder. */
export interface ColumnKinds {
  /** A UUID, as text. */
  id<Name extends string>(name: Name): DeclaredColumn<string, Name>;
  text<Name extends string>(name: Name): DeclaredColumn<string, Name>;
  /** An instant, as ISO-8601 UTC text with milliseconds. */
  instant<Name extends string>(name: Name): DeclaredColumn<string, Name>;
  integer<Name extends string>(name: Name): DeclaredColumn<number, Name>;
  /** An unsigned 32-bit counter (up to 2^32-1), as a number. */
  counter<Name extends string>(name: Name): DeclaredColumn<number, Name>;
  serial<Name extends string>(name: Name): Serial<Name>;
}

export interface Kit extends ColumnKinds {
  table<Name extends string, Declared extends Columns>(
    name: Name,
    columns: Declared,
    extras?: (columns: { [Key in keyof Declared]: AnyColumn }) => Extra[],
  ): DeclaredTable<Name, Declared>;
  index(name: string): IndexOn;
  uniqueIndex(name: string): IndexOn;
  primaryKey(...columns: [AnyColumn, ...AnyColumn[]]): Extra;
}

/**
 * A database's column builder in the declarations' type. It keeps the builder's own particulars (a serial's
 * key and default), and the kit's signature holds it to the value its kind declares.
 */
export function seen<Builder extends ColumnBuilderBase>(
  builder: Builder,
): DeclaredColumn<Builder["_"]["data"], Builder["_"]["name"]> & Pick<Builder, "_"> {
  return builder as unknown as DeclaredColumn<Builder["_"]["data"], Builder["_"]["name"]> & Pick<Builder, "_">;
}

/** A database's own builders for tables, indexes and keys, taken as loosely as both databases' fit. */
export interface TableBuilders {
  table(name: string, columns: never, extras?: never): unknown;
  index(name: string): { on(...columns: never[]): unknown };
  uniqueIndex(name: string): { on(...columns: never[]): unknown };
  primaryKey(config: { columns: never }): unknown;
}

/**
 * A database's kit. The declarations' types and the database's own are two views of the same objects
 * (its builders' tables, columns and indexes); `seen` checks each column kind's values where it is made.
 */
export function kit(builders: TableBuilders, columns: ColumnKinds): Kit {
  return {
    ...columns,
    table: (name, declared, extras) => builders.table(name, declared as never, extras as never) as never,
    index: (name) => builders.index(name) as never,
    uniqueIndex: (name) => builders.uniqueIndex(name) as never,
    primaryKey: (...key) => builders.primaryKey({ columns: key as never }) as never,
  };
}
