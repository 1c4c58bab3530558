// How svc names a snapshot: svc-<UTC time>-<svc version>-<database identity>.db.gz. The name alone says when it
// was taken, by which svc and of which database, wherever it lies; listing, pruning and "latest" go by it and
// leave every other file alone. Several databases may share a destination: pruning and "latest" take only the
// database's own. Names svc gave before it named the database (svc-<time>-<version>.db.gz) still list and
// restore, and belong to no database: nothing prunes them.

/** A snapshot at a destination, as its listing shows it. */
export interface SnapshotInfo {
  name: string;
  /** Bytes, compressed. */
  size: number;
  /** When it was taken (ISO-8601, to the second), from its name. */
  takenAt: string;
  /** The svc that took it, from its name. */
  version: string;
  /** The identity of the database it is of (svc_database), from its name; null in a name given before svc named it. */
  database: string | null;
}

/**
 * How far past now a snapshot's time may be and still count: clocks of boxes sharing a destination differ a
 * little. Beyond it, the time is a clock's mistake (a box that booted with its clock ahead), not a success.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

// The version's tail is lazy: a database's identity after it is read as that, not as part of a pre-release.
const NAME =
  /^svc-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+?)??)(?:-([0-9a-f]{16}))?\.db\.gz$/;

/**
 * The name of a snapshot taken at `at` by svc `version` of the database `identity`, e.g.
 * svc-20261126T153000Z-0.2.1-5f0c2a9e4b7d1c33.db.gz (without an identity, as svc named them before).
 */
export function snapshotName(at: Date, version: string, identity: string | null): string {
  return `svc-${at.toISOString().replace(/[-:]|\.\d+/g, "")}-${version}${identity ? `-${identity}` : ""}.db.gz`;
}

/** When, by which svc and of which database the snapshot named `name` was taken; null for a name svc does not give. */
export function parseSnapshotName(name: string): { takenAt: string; version: string; database: string | null } | null {
  const match = NAME.exec(name);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, version, database] = match;
  const takenAt = `${year}-${month}-${day}T${hour}:${minute}:${second}Z`;
  return Number.isNaN(Date.parse(takenAt)) ? null : { takenAt, version: version!, database: database ?? null };
}

/** Whether the snapshot's time is later than `now` by more than the tolerance: no success, whatever it holds. */
export function isFromTheFuture(snapshot: SnapshotInfo, now: number): boolean {
  return Date.parse(snapshot.takenAt) > now + FUTURE_TOLERANCE_MS;
}

/** The snapshots of the database `identity` whose times are not in the future, oldest first. */
export function ownSnapshots(snapshots: readonly SnapshotInfo[], identity: string | null, now: number): SnapshotInfo[] {
  if (identity === null) return [];
  return snapshots.filter((s) => s.database === identity && !isFromTheFuture(s, now)).sort(byAge);
}

/** Oldest first, by the time in their names (then by name, for a stable order). */
export function byAge(a: SnapshotInfo, b: SnapshotInfo): number {
  return a.takenAt < b.takenAt ? -1 : a.takenAt > b.takenAt ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The database `identity`'s snapshots beyond its newest `keep`, oldest first: what pruning deletes. Another
 * database's, one named before svc named databases, and one dated in the future (left for a person: the warning
 * names it) are never among them.
 */
export function snapshotsBeyondKeep(
  snapshots: readonly SnapshotInfo[],
  keep: number,
  identity: string | null,
  now: number,
): SnapshotInfo[] {
  const own = ownSnapshots(snapshots, identity, now);
  return own.slice(0, Math.max(0, own.length - keep));
}
