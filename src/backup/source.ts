// What `svc restore --from` names: a snapshot file, a snapshot in a bucket (s3://bucket/prefix/<name>), or the
// newest of the database's own in a folder or under a prefix (<folder>/latest, s3://bucket/prefix/latest).
import { basename, dirname } from "node:path";
import type { S3Settings } from "../config/index.ts";
import { nodeFs } from "../process/node-fs.ts";
import { type Destination, NoSuchSnapshot, placeOf } from "./destination.ts";
import { openDestination } from "./open-destination.ts";
import { isFromTheFuture, parseSnapshotName } from "./names.ts";

export interface SnapshotSource {
  /** Where it is, as people may see it: no credential. */
  shown: string;
  /** The file's own name: when and by which svc it was taken, if svc named it. */
  name: string;
  read(): Promise<ReadableStream<Uint8Array>>;
}

const LATEST = "latest";

/**
 * The snapshot `from` names. "latest" is the newest snapshot of the database `identity()` names (the one being
 * replaced); with none to replace (null: no database there, or none that can be read), the newest there when
 * they are all of one database. A snapshot dated in the future is never "latest": name it.
 */
export async function findSource(
  from: string,
  s3: S3Settings,
  identity: () => string | null = () => null,
): Promise<SnapshotSource> {
  const bucket = /^s3:\/\/([^/@]+)\/(.*)$/i.exec(from);
  if (bucket) {
    const [, name, key] = bucket;
    const slash = key!.lastIndexOf("/");
    const at = await openDestination({ kind: "s3", bucket: name!, prefix: key!.slice(0, slash + 1) }, s3);
    return inDestination(at, key!.slice(slash + 1), identity);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(from))
    throw new NoSuchSnapshot(
      "--from takes a file, <folder>/latest, s3://bucket/prefix/<name> or s3://bucket/prefix/latest",
    );
  const fs = nodeFs();
  if (basename(from) === LATEST && !fs.existsSync(from))
    return inDestination(await openDestination({ kind: "folder", path: dirname(from) }, s3), LATEST, identity);
  if (!fs.existsSync(from) || !fs.statSync(from).isFile()) throw new NoSuchSnapshot(`no file at ${from}`);
  return { shown: from, name: basename(from), read: async () => Bun.file(from).stream() };
}

async function inDestination(at: Destination, name: string, identity: () => string | null): Promise<SnapshotSource> {
  if (name === LATEST) name = (await latest(at, identity())).name;
  if (!parseSnapshotName(name))
    throw new NoSuchSnapshot(`${name} is not the name of an svc snapshot (svc-<time>-<version>-<database>.db.gz)`);
  return { shown: placeOf(at.shown, name), name, read: () => at.read(name) };
}

async function latest(at: Destination, identity: string | null) {
  const now = Date.now();
  const all = (await at.list()).filter((s) => !isFromTheFuture(s, now));
  const last = all.at(-1);
  if (!last) throw new NoSuchSnapshot(`no svc snapshots at ${at.shown}`);
  const databases = [...new Set(all.flatMap((s) => (s.database ? [s.database] : [])))].sort();
  const unnamed = all.length - all.filter((s) => s.database).length;
  const of = [...databases, ...(unnamed > 0 ? [`${unnamed} named before svc named databases`] : [])].join(", ");
  const choose = `name the one to restore (svc backup --list shows them), e.g. --from ${placeOf(at.shown, last.name)}`;
  if (identity !== null) {
    const own = all.filter((s) => s.database === identity).at(-1);
    if (own) return own;
    throw new NoSuchSnapshot(`${at.shown} holds no snapshot of this database (${identity}), only of ${of}: ${choose}`);
  }
  if (databases.length > 1)
    throw new NoSuchSnapshot(`${at.shown} holds snapshots of ${databases.length} databases (${of}): ${choose}`);
  return last;
}
