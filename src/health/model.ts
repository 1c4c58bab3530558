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
export const healthSchema = t.Object({
  service: t.String(),
  version: t.String(),
  environment: t.String(),
  database_kind: enumOf(["sqlite", "postgres"], { description: "Which database svc runs on." }),
  status,
  uptime_s: t.Number(),
  checks: ref("HealthChecks"),
});
