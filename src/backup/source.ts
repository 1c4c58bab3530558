// What `svc restore --from` names: a snapshot file, a snapshot in a bucket (s3://bucket/prefix/<name>), or the
// newest of those in a folder or under a prefix (<folder>/latest, s3://bucket/prefix/latest).
import { basename, dirname } from "node:path";
import type { S3Settings } from "../config.ts";
import { nodeFs } from "../node-fs.ts";
import { type Destination, NoSuchSnapshot, openDestination, placeOf } from "./destination.ts";
import { parseSnapshotName } from "./names.ts";

export interface SnapshotSource {
  /** Where it is, as people may see it: no credential. */
  shown: string;
  /** The file's own name: when and by which svc it was taken, if svc named it. */
  name: string;
  read(): Promise<ReadableStream<Uint8Array>>;
}

const LATEST = "latest";

export async function findSource(from: string, s3: S3Settings): Promise<SnapshotSource> {
  const bucket = /^s3:\/\/([^/@]+)\/(.*)$/i.exec(from);
  if (bucket) {
    const [, name, key] = bucket;
    const slash = key!.lastIndexOf("/");
    const at = await openDestination({ kind: "s3", bucket: name!, prefix: key!.slice(0, slash + 1) }, s3);
    return inDestination(at, key!.slice(slash + 1));
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(from))
    throw new NoSuchSnapshot(
      "--from takes a file, <folder>/latest, s3://bucket/prefix/<name> or s3://bucket/prefix/latest",
    );
  const fs = nodeFs();
  if (basename(from) === LATEST && !fs.existsSync(from))
    return inDestination(await openDestination({ kind: "folder", path: dirname(from) }, s3), LATEST);
  if (!fs.existsSync(from) || !fs.statSync(from).isFile()) throw new NoSuchSnapshot(`no file at ${from}`);
  return { shown: from, name: basename(from), read: async () => Bun.file(from).stream() };
}

async function inDestination(at: Destination, name: string): Promise<SnapshotSource> {
  if (name === LATEST) {
    const newest = (await at.list()).at(-1);
    if (!newest) throw new NoSuchSnapshot(`no svc snapshots at ${at.shown}`);
    name = newest.name;
  }
  if (!parseSnapshotName(name))
    throw new NoSuchSnapshot(`${name} is not the name of an svc snapshot (svc-<time>-<version>.db.gz)`);
  return { shown: placeOf(at.shown, name), name, read: () => at.read(name) };
}
