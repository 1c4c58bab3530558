// The backups of `svc serve`, when SVC_BACKUP_TO is set on SQLite: made, and their schedule begun.
// serve.ts imports this only then.
import { version } from "../../package.json";
import type { Config } from "../config/index.ts";
import type { LineLogger } from "../observability/log-lines.ts";
import { openDestination } from "./open-destination.ts";
import { type Backups, createBackups } from "./service.ts";

export async function startBackups(config: Config, logger: LineLogger): Promise<Backups | null> {
  const { to, everySeconds, keep, s3 } = config.backup;
  if (!to || config.database.kind !== "sqlite") return null;
  const backups = createBackups({
    databasePath: config.database.path,
    destination: await openDestination(to, s3),
    everySeconds,
    keep,
    s3,
    version,
    logger,
  });
  // Not waited for: it asks the destination when the newest snapshot was taken, and svc listens meanwhile.
  void backups.start();
  return backups;
}
