// Takes one snapshot: the database as it is now (VACUUM INTO, as `svc backup`: one read transaction, so one
// moment, while svc keeps writing), checked (verify.ts) before it counts, then gzipped. In a worker thread
// while svc serves (in-worker.ts): each step holds its thread for as long as the database is large.
import { rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { backupSqlite } from "../db/sqlite/backup.ts";
import { gzipFile } from "./compress.ts";
import type { SnapshotCounts } from "./verify.ts";
import { verifySnapshot } from "./verify.ts";

export interface SnapshotRequest {
  databasePath: string;
  /** An empty folder of svc's own, on the database's disk, where the files are made. */
  scratch: string;
  /** The snapshot's name (names.ts). */
  name: string;
}

export interface TakenSnapshot {
  name: string;
  /** The gzipped file, in the scratch folder. */
  path: string;
  /** Its bytes. */
  size: number;
  counts: SnapshotCounts;
}

/**
 * Where a snapshot's scratch folders are made (mkdtemp's prefix): beside the database, whose disk has room
 * for a copy of it (a tmpfs /tmp may not), in folders named after it.
 */
export function scratchPrefix(databasePath: string): string {
  return join(dirname(databasePath), `.${basename(databasePath)}.backup-`);
}

/** A snapshot that failed its check: the database it was taken from is damaged. */
export class DamagedSnapshot extends Error {
  override name = "DamagedSnapshot";
}

export async function takeSnapshot({ databasePath, scratch, name }: SnapshotRequest): Promise<TakenSnapshot> {
  const raw = join(scratch, name.replace(/\.gz$/, ""));
  try {
    backupSqlite(databasePath, raw);
    const { problems, counts } = verifySnapshot(raw);
    if (!counts) {
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more: run \`svc check\`)` : "";
      throw new DamagedSnapshot(`the snapshot failed its check: ${problems[0]}${more}`);
    }
    const path = join(scratch, name);
    await gzipFile(raw, path);
    return { name, path, size: Bun.file(path).size, counts };
  } finally {
    rmSync(raw, { force: true });
  }
}
