// Opens the destination configured: each kind's code is imported only when it is the one configured. Apart
// from destination.ts, whose contract folder.ts and s3.ts implement, so that neither imports its importer.
import type { BackupDestination, S3Settings } from "../config/index.ts";
import type { Destination } from "./destination.ts";

export async function openDestination(to: BackupDestination, s3: S3Settings): Promise<Destination> {
  if (to.kind === "folder") return (await import("./folder.ts")).folderDestination(to.path);
  return (await import("./s3.ts")).s3Destination(to.bucket, to.prefix, s3);
}
