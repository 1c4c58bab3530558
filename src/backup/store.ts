// The last steps of every backup, scheduled, asked for, or `svc backup --now`: the snapshot stored at its
// destination, then the database's own oldest beyond SVC_BACKUP_KEEP deleted there (names.ts). Only once the
// new one is stored: a failed run never costs an old snapshot.
import type { Destination } from "./destination.ts";
import { snapshotsBeyondKeep } from "./names.ts";
import type { TakenSnapshot } from "./snapshot.ts";

/**
 * Stores `taken`, a snapshot of the database `identity`; returns the names of the snapshots pruned, or the error
 * pruning stopped at. `now` says which snapshots are dated in the future.
 */
export async function storeSnapshot(
  destination: Destination,
  taken: TakenSnapshot,
  keep: number,
  identity: string | null,
  now: number,
): Promise<{ pruned: string[]; pruneError: unknown }> {
  await destination.put(taken.name, taken.path);
  const pruned: string[] = [];
  try {
    // Never the one just stored, whatever the clocks of other boxes writing there named theirs.
    const old = snapshotsBeyondKeep(await destination.list(), keep, identity, now);
    for (const { name } of old.filter((s) => s.name !== taken.name)) {
      await destination.remove(name);
      pruned.push(name);
    }
    return { pruned, pruneError: null };
  } catch (error) {
    return { pruned, pruneError: error };
  }
}
