// /svc-api/v1/admin/backups: what the backups are doing and the snapshots at SVC_BACKUP_TO (GET), and
// "back up now" (POST, audited as backup.requested). Administrators' tokens only, as every admin route;
// thin adapters to the backups of the serving process (service.ts).
import { Elysia } from "elysia";
import { auditEvent } from "../audit/model.ts";
import { ADMIN_REFUSALS, adminOnly, type AdminGuard } from "../admin/guard.ts";
import type { AuditStore } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { clientInfo } from "../http/client-address.ts";
import { documented, ref } from "../http/openapi.ts";
import { backupsView } from "./model.ts";
import type { Backups } from "./service.ts";

const PATH = "/svc-api/v1/admin/backups";

export interface BackupRouteDeps {
  /** null: no SVC_BACKUP_TO, or PostgreSQL. */
  backups: Backups | null;
  databaseKind: "sqlite" | "postgres";
  audit: AuditStore;
  adminGuard: AdminGuard;
  trustProxy: number;
}

export function backupRoutes({ backups, databaseKind, audit, adminGuard, trustProxy }: BackupRouteDeps) {
  const configured = (): Backups => {
    if (backups) return backups;
    throw new AppError(
      "backups_not_configured",
      databaseKind === "postgres"
        ? "svc backs up SQLite only: back PostgreSQL up with pg_dump or point-in-time recovery (docs/backups.md)."
        : "Set SVC_BACKUP_TO (a folder, or s3://bucket/prefix) and restart svc (docs/backups.md).",
    );
  };
  // Storage that does not answer still leaves the state to show, and says what failed.
  const view = async (of: Backups) => backupsView(of, of.state(), await of.listing());

  return new Elysia()
    .use(adminOnly(adminGuard))
    .get(PATH, () => view(configured()), {
      detail: documented({
        operationId: "adminGetBackups",
        summary: "The backup schedule and how it fares, and the snapshots at SVC_BACKUP_TO, newest first",
        tag: "admin",
        auth: true,
        ok: { status: 200, description: "The backups", schema: ref("Backups") },
        errors: [...ADMIN_REFUSALS, "backups_not_configured"],
      }),
    })
    .post(
      PATH,
      async ({ caller, requestInfo, request, set }) => {
        const of = configured();
        if (of.runNow() === "running")
          throw new AppError("backup_in_progress", "A backup is running already; GET admin/backups shows how it ends.");
        const origin = clientInfo(request, trustProxy, requestInfo);
        await audit.record(auditEvent("backup.requested", { actor: caller.id, origin, detail: { to: of.shown } }));
        set.status = 202;
        set.headers.location = PATH;
        return view(of);
      },
      {
        detail: documented({
          operationId: "adminRequestBackup",
          summary:
            "Back up now: a snapshot taken, checked, gzipped and stored at SVC_BACKUP_TO, the oldest beyond SVC_BACKUP_KEEP deleted; retried as a scheduled one is",
          tag: "admin",
          auth: true,
          ok: {
            status: 202,
            description: "Begun: the backups, running; GET admin/backups shows how it ends",
            schema: ref("Backups"),
            headers: { Location: "admin/backups, where the outcome shows" },
          },
          errors: [...ADMIN_REFUSALS, "backups_not_configured", "backup_in_progress"],
        }),
      },
    );
}
