// Runs at bundle time (imported `with { type: "macro" }`): makes an empty svc database the way a
// first start would (WAL, every migration applied) and returns its file, gzipped and in base64, so
// a first start writes it in one go instead of building it statement by statement (docs/performance.md, "Footprint").
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../../../package.json";
import { embeddedMigrations } from "../migrations.macro.ts";
import { applyMigrations } from "./apply-migrations.ts";

export function emptyDatabaseImage(): string {
  const scratch = mkdtempSync(join(tmpdir(), "svc-empty-db-"));
  try {
    const path = join(scratch, "svc.db");
    const client = new Database(path, { create: true, strict: true });
    client.run("PRAGMA journal_mode = WAL");
    applyMigrations(client, embeddedMigrations("sqlite"), version);
    // Closing checkpoints the WAL into the file and removes it: the file alone is the database.
    client.close();
    return Buffer.from(Bun.gzipSync(readFileSync(path), { level: 9 })).toString("base64");
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
