// `svc restore --from <source> [--force]`: a snapshot back into the SQLite file SVC_DATABASE_URL names.
// Nothing changes until the snapshot is whole and sound: it is written beside the database under a
// temporary name, checked as backups are (verify.ts), and only then does it take the database's name.
// A database already there is refused, or with --force kept aside (with its -wal and -shm) first.
import { dirname, resolve } from "node:path";
import type { S3Settings } from "../config/index.ts";
import { makePrivateFolder, utcStamp } from "../db/sqlite/file.ts";
import { syncFolder } from "../db/sqlite/new-database.ts";
import { nodeFs } from "../process/node-fs.ts";
import { fullDiskText, outOfSpace } from "../db/storage.ts";
import { writeDatabase } from "./compress.ts";
import { failureReason } from "./failure.ts";
import { databaseIdentity, renewEpochOf } from "./identity.ts";
import { isOpenElsewhere } from "./in-use.ts";
import { parseSnapshotName } from "./names.ts";
import { findSource } from "./source.ts";
import { type SnapshotCounts, verifySnapshot } from "./verify.ts";

export interface RestoreRequest {
  databasePath: string;
  from: string;
  force: boolean;
  s3: S3Settings;
}

export interface Restored {
  /** Where the snapshot came from, as people may see it. */
  from: string;
  /** When and by which svc it was taken; null when its name is not one svc gives. */
  takenAt: string | null;
  version: string | null;
  counts: SnapshotCounts;
  /** The database that was there, kept aside; null when there was none. */
  keptAs: string | null;
  /** Files a database that is gone left beside it (a -wal, a -journal), moved aside so as not to be replayed into this one. */
  leftovers: string[];
}

/** A restore refused, the database left as it was: one line saying why. */
export class RestoreRefused extends Error {
  override name = "RestoreRefused";
}

/** SQLite's files of a database besides the database itself. */
const COMPANIONS = ["-wal", "-shm", "-journal"];

export async function restoreSnapshot({ databasePath: path, from, force, s3 }: RestoreRequest): Promise<Restored> {
  const fs = nodeFs();
  const there = fs.existsSync(path);
  if (there && !force)
    throw new RestoreRefused(
      `there is a database at ${resolve(path)} already; --force replaces it, keeping it as ${path}.before-restore-<time>`,
    );
  if (there && isOpenElsewhere(path))
    throw new RestoreRefused(`${resolve(path)} is open in another process (svc serving it?): stop svc, then restore`);

  let source;
  try {
    // "latest" is the newest of this database's own (source.ts).
    // Nothing has it open (checked above): reading it leaves nothing beside it.
    source = await findSource(from, s3, () => (there ? databaseIdentity(path, { tidy: true }) : null));
  } catch (error) {
    throw new RestoreRefused(failureReason(error, s3));
  }
  // A folder made for it goes again if the restore is refused: nothing changed means nothing left behind.
  const made = makePrivateFolder(dirname(path));
  const partial = `${path}.restore-${utcStamp()}-${crypto.randomUUID().slice(0, 8)}`;
  let counts: SnapshotCounts;
  try {
    try {
      await writeDatabase(await source.read(), partial);
    } catch (error) {
      // The snapshot may be sound: only the room to write it out was wanting (said below).
      if (outOfSpace(error)) throw error;
      throw new RestoreRefused(`${source.shown} cannot be read as a snapshot: ${failureReason(error, s3)}`);
    }
    const checked = verifySnapshot(partial);
    if (!checked.counts)
      throw new RestoreRefused(`${source.shown} is not a sound svc database: ${checked.problems[0]}`);
    counts = checked.counts;
    // The same database, its event log now on another history: cursors from before get RESYNC.
    renewEpochOf(partial);
  } catch (error) {
    fs.rmSync(made ?? partial, { recursive: true, force: true });
    if (outOfSpace(error))
      throw new RestoreRefused(`${fullDiskText(dirname(resolve(path)))}: free space there, then restore again`);
    throw error;
  }

  const keptAs = there ? `${path}.before-restore-${utcStamp()}` : null;
  let leftovers: string[];
  try {
    leftovers = putInPlace(path, partial, keptAs);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw new RestoreRefused(`could not put the snapshot in place: ${failureReason(error, s3)}`);
  }
  syncFolder(dirname(path));
  const named = parseSnapshotName(source.name);
  return {
    from: source.shown,
    takenAt: named?.takenAt ?? null,
    version: named?.version ?? null,
    counts,
    keptAs,
    leftovers,
  };
}

/**
 * The checked snapshot at `partial` renamed to `path`: the database there first kept as `keptAs` with its
 * companions, or with none there, what a database that is gone left beside it moved aside. Returns those.
 * On a failure, the database that was there is put back.
 */
function putInPlace(path: string, partial: string, keptAs: string | null): string[] {
  const fs = nodeFs();
  const moved: [from: string, to: string][] = [];
  const move = (from: string, to: string) => {
    fs.renameSync(from, to);
    moved.push([from, to]);
  };
  const leftovers: string[] = [];
  const stamp = utcStamp();
  try {
    for (const suffix of COMPANIONS) {
      const file = `${path}${suffix}`;
      if (!fs.existsSync(file)) continue;
      // Kept aside in pairs (<kept>-wal goes with <kept>), so that the kept file still reads what its log held.
      if (keptAs) move(file, `${keptAs}${suffix}`);
      // With no database, what a log holds belongs to one that is gone: SQLite would replay it into this one.
      else if (suffix === "-shm") fs.rmSync(file, { force: true });
      else {
        move(file, `${file}.orphaned-${stamp}`);
        leftovers.push(`${file}.orphaned-${stamp}`);
      }
    }
    if (keptAs) move(path, keptAs);
    fs.renameSync(partial, path);
    return leftovers;
  } catch (error) {
    for (const [from, to] of moved.reverse()) fs.renameSync(to, from);
    throw error;
  }
}
