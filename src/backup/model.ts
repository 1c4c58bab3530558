// The shapes of /svc-api/v1/admin/backups (t schemas for the OpenAPI document, named BackupSnapshot and
// Backups) and the view the routes answer with.
import { t, type Static } from "elysia";
import { enumOf, integer, ref } from "../http/openapi.ts";
import type { SnapshotInfo } from "./names.ts";
import type { BackupState } from "./service.ts";

const instant = t.String({ format: "date-time" });

export const backupSnapshotSchema = t.Object({
  name: t.String({
    description:
      "svc-<UTC time>-<svc version>-<database identity>.db.gz (svc-<UTC time>-<svc version>.db.gz before svc named databases)",
  }),
  size: integer({ description: "Bytes, gzipped." }),
  created_at: instant,
  version: t.String({ description: "The svc that took it." }),
});

export const backupsSchema = t.Object({
  schedule: t.Object({
    every: t.Union([t.String(), t.Null()], {
      description: "SVC_BACKUP_EVERY (30m, 6h, 1d); null: snapshots are taken only when asked for.",
    }),
    to: t.String({ description: "SVC_BACKUP_TO: a folder, or s3://bucket/prefix. Never a credential." }),
    keep: integer({ description: "SVC_BACKUP_KEEP: the newest this many are kept there." }),
  }),
  status: enumOf(["ok", "failing", "pending"], {
    description:
      "ok: the last run stored its snapshot, or one of this database's taken since shows at SVC_BACKUP_TO; failing: the last run did not (retries follow); pending: neither yet.",
  }),
  running: t.Boolean(),
  scheduled_here: t.Union([t.Boolean(), t.Null()], {
    description:
      "Whether this svc process takes the scheduled runs (one does, among those sharing the database); null without a schedule.",
  }),
  next_run_at: t.Union([instant, t.Null()], { description: "The next scheduled run, or retry if sooner." }),
  last_success_at: t.Union([instant, t.Null()], {
    description:
      "When the newest of this database's snapshots at SVC_BACKUP_TO was taken, whoever stored it (re-read every minute and after each run); one dated in the future is none.",
  }),
  last_failure: t.Union([t.Object({ at: instant, reason: t.String() }), t.Null()], {
    description: "The latest failure since svc started, in one line (never a credential).",
  }),
  failures: integer({ description: "Runs and retries that failed since svc started." }),
  snapshots: t.Union([t.Array(ref("BackupSnapshot")), t.Null()], {
    description:
      "The snapshots at SVC_BACKUP_TO, newest first; null when they could not be listed (listing_error says why).",
  }),
  listing_error: t.Union([t.String(), t.Null()]),
});

export type BackupsView = Static<typeof backupsSchema>;

/** What GET (and POST) admin/backups answer: the settings, the state, and the snapshots newest first. */
export function backupsView(
  settings: { everySeconds: number | null; shown: string; keep: number },
  state: BackupState,
  listing: { snapshots: SnapshotInfo[] } | { error: string },
): BackupsView {
  return {
    schedule: {
      every: settings.everySeconds === null ? null : durationText(settings.everySeconds),
      to: settings.shown,
      keep: settings.keep,
    },
    status: state.status,
    running: state.running,
    scheduled_here: state.scheduledHere,
    next_run_at: state.nextRunAt,
    last_success_at: state.lastSuccessAt,
    last_failure: state.lastFailure,
    failures: state.failures,
    snapshots:
      "snapshots" in listing
        ? listing.snapshots
            .map((s) => ({ name: s.name, size: s.size, created_at: s.takenAt, version: s.version }))
            .reverse()
        : null,
    listing_error: "error" in listing ? listing.error : null,
  };
}

/** Seconds as SVC_BACKUP_EVERY could have said them: in the largest unit that divides them (21600 → 6h). */
export function durationText(seconds: number): string {
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
  ] as const)
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
