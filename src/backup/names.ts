// How svc names a snapshot: svc-<UTC time>-<svc version>.db.gz. The name alone says when it was taken and
// by which svc, wherever it lies; listing, pruning and "latest" go by it and leave every other file alone.

/** A snapshot at a destination, as its listing shows it. */
export interface SnapshotInfo {
  name: string;
  /** Bytes, compressed. */
  size: number;
  /** When it was taken (ISO-8601, to the second), from its name. */
  takenAt: string;
  /** The svc that took it, from its name. */
  version: string;
}

const NAME = /^svc-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)\.db\.gz$/;

/** The name of a snapshot taken at `at` by svc `version`, e.g. svc-20261126T153000Z-0.2.0.db.gz. */
export function snapshotName(at: Date, version: string): string {
  return `svc-${at.toISOString().replace(/[-:]|\.\d+/g, "")}-${version}.db.gz`;
}

/** When and by which svc the snapshot named `name` was taken; null for a name svc does not give. */
export function parseSnapshotName(name: string): { takenAt: string; version: string } | null {
  const match = NAME.exec(name);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, version] = match;
  const takenAt = `${year}-${month}-${day}T${hour}:${minute}:${second}Z`;
  return Number.isNaN(Date.parse(takenAt)) ? null : { takenAt, version: version! };
}

/** Oldest first, by the time in their names (then by name, for a stable order). */
export function byAge(a: SnapshotInfo, b: SnapshotInfo): number {
  return a.takenAt < b.takenAt ? -1 : a.takenAt > b.takenAt ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The snapshots beyond the newest `keep`, oldest first: what pruning deletes. */
export function beyondKeep(snapshots: readonly SnapshotInfo[], keep: number): SnapshotInfo[] {
  const sorted = [...snapshots].sort(byAge);
  return sorted.slice(0, Math.max(0, sorted.length - keep));
}
