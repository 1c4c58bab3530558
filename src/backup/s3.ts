// Snapshots in a bucket of S3-compatible storage (AWS S3, MinIO, R2, B2, Garage), through Bun's own S3
// client. An object appears only once its upload is complete, so a reader never finds half a snapshot.
import { S3Client } from "bun";
import type { S3Settings } from "../config/index.ts";
import { NoSuchSnapshot, type Destination } from "./destination.ts";
import { byAge, parseSnapshotName, type SnapshotInfo } from "./names.ts";

export function s3Destination(bucket: string, prefix: string, settings: S3Settings): Destination {
  const client = new S3Client({ ...settings, bucket });
  const shown = `s3://${bucket}/${prefix}`;
  // Every failure names the storage and the bucket (an operator may have several), never the keys.
  const where = `${settings.endpoint?.replace(/\/\/[^/@]*@/, "//") ?? "AWS S3"} ${shown}`;
  const destination: Destination = {
    shown,
    async list() {
      const snapshots: SnapshotInfo[] = [];
      let continuationToken: string | undefined;
      do {
        const page = await client.list({ prefix, ...(continuationToken && { continuationToken }) });
        for (const object of page.contents ?? []) {
          const name = object.key.slice(prefix.length);
          const parsed = parseSnapshotName(name);
          if (parsed) snapshots.push({ name, size: object.size ?? 0, ...parsed });
        }
        continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (continuationToken);
      return snapshots.sort(byAge);
    },
    async put(name, path) {
      await client.write(`${prefix}${name}`, Bun.file(path), { type: "application/gzip" });
    },
    async read(name) {
      const file = client.file(`${prefix}${name}`);
      if (!parseSnapshotName(name) || !(await file.exists()))
        throw new NoSuchSnapshot(`no snapshot named ${name} at ${shown}`);
      return file.stream();
    },
    async remove(name) {
      await client.delete(`${prefix}${name}`);
    },
  };
  return {
    shown,
    list: () => named(destination.list(), where),
    put: (name, path) => named(destination.put(name, path), where),
    read: (name) => named(destination.read(name), where),
    remove: (name) => named(destination.remove(name), where),
  };
}

/** Bun's S3 error (its code and name kept, for failure.ts) with `where` at the front of its message. */
async function named<T>(work: Promise<T>, where: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof Error && !(error instanceof NoSuchSnapshot) && !error.message.startsWith(where))
      error.message = `${where}: ${error.message}`;
    throw error;
  }
}
