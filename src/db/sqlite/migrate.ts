// The SQLite migrations this binary carries, and the step that brings a database up to them: refused
// for a database a later svc migrated, and preceded by a snapshot of one that holds anything, kept
// beside it for going back (docs/operations.md, "Upgrading and going back").
import type { Database } from "bun:sqlite";
import { basename, dirname, join, resolve } from "node:path";
import { version } from "../../../package.json";
import { nodeFs } from "../../process/node-fs.ts";
import { describeDatabase } from "../describe.ts";
import { embeddedMigrations } from "../migrations.macro.ts" with { type: "macro" };
import type { BehindDatabase, LatestMigration, UpgradeStep } from "../upgrades.ts";
import { behind, pendingMigrations, RECORDED_MIGRATIONS, refuseNewer } from "../upgrades.ts";
import { applyMigrations, latestCreatedAt } from "./apply-migrations.ts";
import { utcStamp } from "./file.ts";
import { snapshotInto } from "./snapshot.ts";

export const MIGRATIONS = embeddedMigrations("sqlite");

/**
 * Brings the database at `path` (":memory:" for one in memory) up to this binary's migrations,
 * telling `onStep` of the snapshot and of each migration applied. Throws NewerDatabase, having
 * written nothing, for a database a later svc migrated.
 */
export function migrateSqlite(client: Database, path = ":memory:", onStep?: (step: UpgradeStep) => void): void {
  const latest = refuseNewerSqlite(client, path);
  if (pendingMigrations(MIGRATIONS, latest?.createdAt ?? null).length === 0) return;
  const snapshot = path !== ":memory:" && holdsTables(client) ? snapshotPath(path) : null;
  if (snapshot) {
    snapshotInto(client, snapshot);
    onStep?.({ snapshot });
  }
  const previous = latest?.svcVersion ?? null;
  for (const migration of applyMigrations(client, MIGRATIONS, version)) onStep?.({ applied: migration.name });
  if (!snapshot) return;
  onStep?.({ wayBack: { database: resolve(path), snapshot, previous } });
  for (const pruned of pruneSnapshots(resolve(path), snapshot, KEPT_SNAPSHOTS)) onStep?.({ pruned });
}

/** How many upgrades' snapshots stay beside a database: this one's and the one before. */
const KEPT_SNAPSHOTS = 2;

/**
 * Deletes the snapshots earlier upgrades left beside `path` (`<name>.before-<version>[-<time>]`, never a
 * restore's `.before-restore-<time>`) but `made` and the newest `keep - 1` of the others, by when each was
 * written; returns them. One that cannot be deleted stays: the upgrade is done, and the next one tries again.
 */
function pruneSnapshots(path: string, made: string, keep: number): string[] {
  const fs = nodeFs();
  const prefix = `${basename(path)}.before-`;
  const earlier = fs
    .readdirSync(dirname(path))
    .filter((name) => name.startsWith(prefix) && /^\d/.test(name.slice(prefix.length)))
    .filter((name) => !/-(wal|shm|journal)$/.test(name))
    .map((name) => join(dirname(path), name))
    .filter((file) => file !== made)
    .flatMap((file) => {
      try {
        return [{ file, written: fs.statSync(file).mtimeMs }];
      } catch {
        return []; // Gone meanwhile.
      }
    })
    .sort((a, b) => b.written - a.written);
  const pruned: string[] = [];
  for (const { file } of earlier.slice(keep - 1)) {
    try {
      fs.rmSync(file);
      pruned.push(file);
    } catch {
      // Kept: see above.
    }
  }
  return pruned;
}

/** The newest migration the database records (null: none); throws NewerDatabase when a later svc migrated it. */
export function refuseNewerSqlite(client: Database, path: string): LatestMigration | null {
  const latest = latestMigration(client);
  refuseNewer(describeDatabase({ kind: "sqlite", path }), latest, MIGRATIONS);
  return latest;
}

/** See upgrades.ts, behind. */
export function behindSqlite(client: Database, path: string): BehindDatabase | null {
  return behind(describeDatabase({ kind: "sqlite", path }), latestMigration(client), MIGRATIONS);
}

/** The newest migration the database records, with what svc recorded of it; null: none. */
function latestMigration(client: Database): LatestMigration | null {
  const createdAt = latestCreatedAt(client);
  return createdAt === null ? null : recorded(client, createdAt);
}

/** What svc recorded of the migration of `createdAt`: nothing, for one an svc that kept no record applied. */
function recorded(client: Database, createdAt: number): LatestMigration {
  const table = client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(RECORDED_MIGRATIONS);
  const row = table
    ? client
        .query<{ name: string; svc_version: string }, [number]>(
          `SELECT name, svc_version FROM "${RECORDED_MIGRATIONS}" WHERE created_at = ?`,
        )
        .get(createdAt)
    : null;
  return { createdAt, name: row?.name ?? null, svcVersion: row?.svc_version ?? null };
}

/** Whether the database holds anything to keep: a new, empty one needs no snapshot. */
function holdsTables(client: Database): boolean {
  return client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").get() !== null;
}

/**
 * `svc.db.before-<this version>` beside the database; if a file has that name (an upgrade to this
 * version tried before, or undone), it stays, and the new one's name gets the time as well.
 */
function snapshotPath(path: string): string {
  const name = `${resolve(path)}.before-${version}`;
  if (!nodeFs().existsSync(name)) return name;
  return `${name}-${utcStamp()}`;
}
