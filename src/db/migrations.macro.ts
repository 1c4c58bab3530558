// Runs at bundle time (imported `with { type: "macro" }`): reads drizzle-kit's migration folder
// and returns it as data, so the compiled binary carries its migrations and needs no files.
import { readMigrationFiles } from "drizzle-orm/migrator";

export interface EmbeddedMigration {
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

export function embeddedMigrations(dialect: "sqlite" | "postgres"): EmbeddedMigration[] {
  const migrationsFolder = `${import.meta.dir}/../../drizzle/${dialect}`;
  return readMigrationFiles({ migrationsFolder });
}
