// The last success, read from the destination's listing: the newest of this database's snapshots there,
// whoever stored it, unless it is dated in the future (then it is named in a warning, once).
import type { S3Settings } from "../config/index.ts";
import type { LineLogger } from "../observability/log-lines.ts";
import type { Clock } from "./clock.ts";
import type { Destination } from "./destination.ts";
import { failureReason } from "./failure.ts";
import { isFromTheFuture, ownSnapshots, type SnapshotInfo } from "./names.ts";

export interface ListingReaderDeps {
  destination: Destination;
  identity: () => string | null;
  clock: Clock;
  logger: LineLogger;
  s3: S3Settings;
  /** The service's state, whose last success and status each reading updates. */
  state: {
    status: "ok" | "failing" | "pending";
    lastSuccessAt: string | null;
    lastFailure: { at: string; reason: string } | null;
  };
}

export function listingReader({ destination, identity, clock, logger, s3, state }: ListingReaderDeps) {
  /** Snapshots dated in the future already warned of: once each. */
  const warnedFuture = new Set<string>();
  let listingFails = false;

  /**
   * Reads the destination's listing: the last success is the newest of this database's snapshots there that is
   * not dated in the future; one that is, is named in a warning. A failing or pending status turns ok when a
   * snapshot taken after the last failure shows there. Returns the newest (null: none, or not readable).
   */
  return async function readListing(): Promise<SnapshotInfo | null> {
    let snapshots: SnapshotInfo[];
    try {
      snapshots = await destination.list();
    } catch (error) {
      if (!listingFails)
        logger.warn({ to: destination.shown }, `could not list the backups: ${failureReason(error, s3)}`);
      listingFails = true;
      return null;
    }
    listingFails = false;
    const now = clock.now();
    const mine = identity();
    for (const s of snapshots)
      if (s.database === mine && isFromTheFuture(s, now) && !warnedFuture.has(s.name)) {
        warnedFuture.add(s.name);
        logger.warn(
          { to: destination.shown, snapshot: s.name },
          `backup snapshot ${s.name} is dated in the future (${s.takenAt}): it does not count as a success, nor among SVC_BACKUP_KEEP; a clock was wrong when it was taken: check the box's clock, and delete or rename it`,
        );
      }
    const newest = ownSnapshots(snapshots, mine, now).at(-1) ?? null;
    state.lastSuccessAt = newest?.takenAt ?? null;
    const failedAt = state.lastFailure ? Date.parse(state.lastFailure.at) : null;
    if (newest && (state.status === "pending" || (failedAt !== null && Date.parse(newest.takenAt) > failedAt)))
      state.status = "ok";
    return newest;
  };
}
