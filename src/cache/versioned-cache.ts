// A bounded cache of reads that is right across instances: every entry carries the table version it
// was read at, and is used only while the database still reports that version. The version is read
// before the data, so an entry can be tagged older than its data (and be refreshed needlessly once)
// but never newer (and be served stale).
import { type Awaitable, chain } from "../lib/awaitable.ts";
import { setBounded } from "../lib/bounded-map.ts";

export class VersionedCache<T> {
  private readonly entries = new Map<string, { version: number; value: T }>();

  constructor(private readonly capacity: number) {}

  /** The kept value at once while its version holds; otherwise read, kept and returned. */
  get(key: string, version: number, read: () => Awaitable<T>): Awaitable<T> {
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.value;
    return chain(read(), (value) => {
      setBounded(this.entries, key, { version, value }, this.capacity);
      return value;
    });
  }
}
