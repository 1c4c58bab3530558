// The health probes' answers as the OpenAPI document names them (Live, Ready, Health, HealthChecks).
import { t } from "elysia";
import { enumOf, ref } from "../http/openapi.ts";

export const liveSchema = t.Object({ status: t.Literal("ok") });

export const checksSchema = t.Object({
  database: t.Union([t.Literal("ok"), t.Literal("unavailable")]),
  storage: t.Optional(
    t.Union([t.Literal("ok"), t.Literal("full")], {
      description:
        "full: writes are refused with 503 storage_full; reads go on. Absent while the database does not answer.",
    }),
  ),
});
const status = t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("unavailable")]);
export const readySchema = t.Object({ status, checks: ref("HealthChecks") });
/** Left out for a stranger to a production svc (src/http/exposure.ts). */
const DETAIL = "Absent in production unless asked on the operations listener or from the box itself.";
export const healthSchema = t.Object({
  service: t.String(),
  version: t.Optional(t.String({ description: DETAIL })),
  environment: t.Optional(t.String({ description: DETAIL })),
  database_kind: t.Optional(enumOf(["sqlite", "postgres"], { description: `Which database svc runs on. ${DETAIL}` })),
  status,
  uptime_s: t.Optional(t.Number({ description: DETAIL })),
  checks: ref("HealthChecks"),
  backup: t.Optional(
    t.Object(
      {
        status: enumOf(["ok", "failing", "pending"], {
          description:
            "ok: the last run stored its snapshot; failing: it did not (retries follow); pending: none has ended yet.",
        }),
        last_success_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
          description: "When the newest snapshot stored was taken; null: none yet.",
        }),
      },
      { description: `Scheduled backups (SVC_BACKUP_TO), when configured. ${DETAIL}` },
    ),
  ),
  mail: t.Optional(
    enumOf(["ok", "failing"], {
      description: `The mail sender: failing when its last attempt failed and nothing was sent since; absent while mail is off. ${DETAIL}`,
    }),
  ),
});
