// Runs at bundle time (imported `with { type: "macro" }`): reads drizzle-kit's migration folder
// and returns it as data, so the compiled binary carries its migrations and needs no files.
import { readFileSync } from "node:fs";
import { readMigrationFiles } from "drizzle-orm/migrator";

export interface EmbeddedMigration {
  /** drizzle-kit's tag, "0005_sessions": what svc logs as it applies it, and records beside it. */
  name: string;
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

export function embeddedMigrations(dialect: "sqlite" | "postgres"): EmbeddedMigration[] {
  const migrationsFolder = `${import.meta.dir}/../../drizzle/${dialect}`;
  const journal = JSON.parse(readFileSync(`${migrationsFolder}/meta/_journal.json`, "utf8")) as {
    entries: { tag: string }[];
  };
  // In the journal's order, which is readMigrationFiles' own.
  return readMigrationFiles({ migrationsFolder }).map((migration, i) => ({
    ...migration,
    name: journal.entries[i]!.tag,
  }));
}
