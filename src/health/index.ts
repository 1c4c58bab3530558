// GET /svc/health: who is answering, and whether the database answers too. For orchestrators,
// /svc/health/live (the process is up) and /svc/health/ready (the database answers).
import { Elysia, t } from "elysia";
import { documented } from "../http/openapi.ts";
import type { Store } from "../db/store.ts";
import { version } from "../../package.json";

const PING_TIMEOUT_MS = 2000;

export function healthRoutes(store: Store, environment: string) {
  const startedAt = performance.now();
  return new Elysia({ name: "svc/health" })
    .get("/svc/health/live", () => ({ status: "ok" }), {
      detail: documented({ summary: "The process is up", tag: "health", ok: { status: 200, description: "Up", schema: t.Object({ status: t.Literal("ok") }) }, errors: [] }),
    })
    .get(
      "/svc/health/ready",
      async ({ set }) => {
        const database = await check(store);
        set.status = database === "ok" ? 200 : 503;
        return { status: database === "ok" ? "ok" : "unavailable", checks: { database } };
      },
      { detail: health("Ready to serve: the database answers (503 when it does not)", readySchema) },
    )
    .get("/svc/health", async ({ set }) => {
      const database = await check(store);
      set.status = database === "ok" ? 200 : 503;
      return {
        service: "svc",
        version,
        environment,
        status: database === "ok" ? "ok" : "unavailable",
        uptime_s: Math.round((performance.now() - startedAt) / 100) / 10,
        checks: { database },
      };
    }, { detail: health("Service, version, environment, uptime and the database check (503 when it does not answer)", healthSchema) });
}

const checks = t.Object({ database: t.Union([t.Literal("ok"), t.Literal("unavailable")]) });
const status = t.Union([t.Literal("ok"), t.Literal("unavailable")]);
const readySchema = t.Object({ status, checks });
const healthSchema = t.Object({ service: t.String(), version: t.String(), environment: t.String(), status, uptime_s: t.Number(), checks });

function health(summary: string, schema: typeof readySchema | typeof healthSchema) {
  return documented({
    summary,
    tag: "health",
    ok: { status: 200, description: "Healthy", schema },
    also: [{ status: 503, description: "The database does not answer", schema }],
    errors: [],
  });
}

async function check(store: Store): Promise<"ok" | "unavailable"> {
  try {
    await store.ping(PING_TIMEOUT_MS);
    return "ok";
  } catch {
    return "unavailable";
  }
}
