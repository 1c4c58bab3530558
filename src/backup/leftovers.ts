// A run's scratch folder sits beside the database; one a process left when it died is removed at start.
import { readdir, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { S3Settings } from "../config/index.ts";
import type { LineLogger } from "../observability/log-lines.ts";
import { failureReason } from "./failure.ts";
import { scratchPrefix } from "./snapshot.ts";

/** Scratch folders a run in a process that has since died left beside the database. */
export async function removeLeftovers(databasePath: string, logger: LineLogger, s3: S3Settings): Promise<void> {
  const folder = dirname(databasePath);
  const prefix = basename(scratchPrefix(databasePath));
  try {
    for (const name of await readdir(folder))
      if (name.startsWith(prefix)) await rm(join(folder, name), { recursive: true, force: true });
  } catch (error) {
    logger.warn({ folder }, `could not remove a backup's leftover files: ${failureReason(error, s3)}`);
  }
}
