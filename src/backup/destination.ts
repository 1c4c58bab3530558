// Where snapshots go (SVC_BACKUP_TO): a folder, or a bucket of S3-compatible storage. One small contract,
// one file per kind (open-destination.ts imports the one configured).
import type { BackupDestination } from "../config/index.ts";
import type { SnapshotInfo } from "./names.ts";

export interface Destination {
  /** SVC_BACKUP_TO as people may see it: the folder, or s3://bucket/prefix. Never a credential. */
  readonly shown: string;
  /** svc's snapshots there, oldest first. Files svc did not name (names.ts) are neither listed nor touched. */
  list(): Promise<SnapshotInfo[]>;
  /** Stores the file at `path` as the snapshot `name`, whole or not at all: a reader never finds half of it. */
  put(name: string, path: string): Promise<void>;
  /** The snapshot's bytes. Throws NoSuchSnapshot when there is none of that name. */
  read(name: string): Promise<ReadableStream<Uint8Array>>;
  /** Deletes the snapshot; one already gone is no error. */
  remove(name: string): Promise<void>;
}

export class NoSuchSnapshot extends Error {
  override name = "NoSuchSnapshot";
}

/** SVC_BACKUP_TO as people may see it (the configuration holds no credential in it: config.ts refuses one). */
export function showDestination(to: BackupDestination): string {
  return to.kind === "folder" ? to.path : `s3://${to.bucket}/${to.prefix}`;
}

/** Where the snapshot `name` is at a destination shown as `shown`, as people may see it. */
export function placeOf(shown: string, name: string): string {
  return `${shown}${shown.endsWith("/") ? "" : "/"}${name}`;
}
