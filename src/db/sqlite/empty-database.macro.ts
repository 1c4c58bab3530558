// Runs at bundle time (imported `with { type: "macro" }`): makes an empty svc database the way a
// first start would (WAL, every migration applied) and returns its file, gzipped and in base64, so
// a first start writes it in one go instead of building it statement by statement (docs/performance.md, "Footprint").
// With it, the identity and epoch its migrations gave it (svc_database), which new-database.ts replaces in each
// copy it writes: every database its own.
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { version } from "../../../package.json";
import { embeddedMigrations } from "../migrations.macro.ts";
import { applyMigrations } from "./apply-migrations.ts";

export interface EmptyDatabaseImage {
  /** The file, gzipped, in base64. */
  image: string;
  /** Its svc_database row, as text the file holds: each new database gets its own in their place. */
  identity: string;
  epoch: string;
}

export function emptyDatabaseImage(): EmptyDatabaseImage {
  const scratch = mkdtempSync(join(tmpdir(), "svc-empty-db-"));
  try {
    const path = join(scratch, "svc.db");
    const client = new Database(path, { create: true, strict: true });
    client.run("PRAGMA journal_mode = WAL");
    applyMigrations(client, embeddedMigrations("sqlite"), version);
    const { id, epoch } = client.query<{ id: string; epoch: string }, []>("SELECT id, epoch FROM svc_database").get()!;
    // Closing checkpoints the WAL into the file and removes it: the file alone is the database.
    client.close();
    const file = readFileSync(path);
    for (const text of [id, epoch])
      if (!/^[0-9a-f]{16}$/.test(text) || !file.includes(text))
        throw new Error(`the empty database does not hold ${text} as text`);
    return { image: Buffer.from(Bun.gzipSync(file, { level: 9 })).toString("base64"), identity: id, epoch };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
