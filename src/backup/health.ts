// What health and the metrics tell of the backups (service.ts keeps their state): types only come from
// there, so that the app loads none of the backup code when there are no backups.
import type { BackupHealth } from "../health/probes.ts";
import type { BackupFigures } from "../observability/metrics.ts";
import type { Backups } from "./service.ts";

/** /svc/health's backup detail. */
export function backupHealth(backups: Backups): () => BackupHealth {
  return () => {
    const { status, lastSuccessAt } = backups.state();
    return { status, last_success_at: lastSuccessAt };
  };
}

/** The backup metrics' figures. */
export function backupFigures(backups: Backups): () => BackupFigures {
  return () => {
    const { lastSuccessAt, failures } = backups.state();
    return { lastSuccessSeconds: lastSuccessAt === null ? 0 : Date.parse(lastSuccessAt) / 1000, failures };
  };
}
