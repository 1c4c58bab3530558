// GET /svc/health: who is answering, whether the database answers, and whether it has room to write.
// For orchestrators, /svc/health/live (the process is up) and /svc/health/ready (the database answers).
// Full storage is "degraded", still 200: reads and logins go on, only writes are refused (503).
import { Elysia, t } from "elysia";
import type { DirectRoute } from "../http/front-door.ts";
import { documented, enumOf } from "../http/openapi.ts";
import type { Store } from "../db/store.ts";
import { version } from "../../package.json";

const PING_TIMEOUT_MS = 2000;
/** How long a successful database check answers for later probes. */
export const CHECK_REUSE_MS = 1000;

type Check = "ok" | "degraded" | "unavailable";

/** The checks object of a result: the database answers unless unavailable; its storage is full when degraded. */
const CHECKS: Record<Check, string> = {
  ok: '{"database":"ok","storage":"ok"}',
  degraded: '{"database":"ok","storage":"full"}',
  unavailable: '{"database":"unavailable"}',
};

/**
 * `direct`: the probes, answered by the front door without Elysia. `routes`: the same answers as
 * Elysia routes, for the API description and as the way in when CORS is on.
 */
export function healthRoutes(store: Store, environment: string) {
  const startedAt = performance.now();
  const database = databaseCheck(store);
  // Everything but the status and uptime is fixed: rendered once.
  const identity = JSON.stringify({ service: "svc", version, environment, database_kind: store.kind }).slice(0, -1);
  let body = { tenths: -1, result: "ok" as Check, text: "" };
  const direct: Record<string, DirectRoute> = {
    "/svc/health/live": (_request, headers) => json(200, '{"status":"ok"}', headers),
    "/svc/health/ready": (_request, headers) =>
      database.answer((result) =>
        json(statusFor(result), `{"status":"${result}","checks":${CHECKS[result]}}`, headers),
      ),
    "/svc/health": (_request, headers) =>
      database.answer((result) => {
        // The uptime has tenths of a second, so the body changes ten times a second at most.
        const tenths = Math.round((performance.now() - startedAt) / 100);
        if (tenths !== body.tenths || result !== body.result) {
          body = {
            tenths,
            result,
            text: `${identity},"status":"${result}","uptime_s":${tenths / 10},"checks":${CHECKS[result]}}`,
          };
        }
        return json(statusFor(result), body.text, headers);
      }),
  };
  const twin =
    (path: string) =>
    ({ request }: { request: Request }) =>
      direct[path]!(request, {});
  const routes = new Elysia({ name: "svc/health" })
    .get("/svc/health/live", twin("/svc/health/live"), {
      detail: documented({
        operationId: "live",
        summary: "The process is up",
        tag: "health",
        ok: { status: 200, description: "Up", schema: t.Object({ status: t.Literal("ok") }) },
        errors: [],
      }),
    })
    .get("/svc/health/ready", twin("/svc/health/ready"), {
      detail: health("ready", "Ready to serve: the database answers (503 when it does not)", readySchema),
    })
    .get("/svc/health", twin("/svc/health"), {
      detail: health(
        "health",
        "Service, version, environment, uptime and the database check (503 when it does not answer)",
        healthSchema,
      ),
    });
  return { direct, routes };
}

function statusFor(result: Check): number {
  return result === "unavailable" ? 503 : 200;
}

function json(status: number, body: string, headers: Record<string, string>): Response {
  headers["content-type"] = "application/json";
  return new Response(body, { status, headers });
}

const checks = t.Object({
  database: t.Union([t.Literal("ok"), t.Literal("unavailable")]),
  storage: t.Optional(
    t.Union([t.Literal("ok"), t.Literal("full")], {
      description:
        "full: writes are refused with 503 storage_full; reads go on. Absent while the database does not answer.",
    }),
  ),
});
const status = t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("unavailable")]);
const readySchema = t.Object({ status, checks });
const healthSchema = t.Object({
  service: t.String(),
  version: t.String(),
  environment: t.String(),
  database_kind: enumOf(["sqlite", "postgres"], { description: "Which database svc runs on." }),
  status,
  uptime_s: t.Number(),
  checks,
});

function health(operationId: string, summary: string, schema: typeof readySchema | typeof healthSchema) {
  return documented({
    operationId,
    summary,
    tag: "health",
    ok: {
      status: 200,
      description: "Healthy, or degraded: the storage is full, so writes are refused while reads go on",
      schema,
    },
    also: [{ status: 503, description: "The database does not answer", schema }],
    errors: [],
  });
}

/**
 * The database check behind the health probes. They need no token, so a flood of probes must not
 * become a flood of queries: probes arriving while a check runs share it, and an "ok" answers for
 * CHECK_REUSE_MS. A failure is never reused, so recovery shows on the next probe.
 */
function databaseCheck(store: Store) {
  let okUntil = 0;
  let running: Promise<Check> | undefined;
  const run = async (): Promise<Check> => {
    try {
      await store.ping(PING_TIMEOUT_MS);
      if (store.storage() === "full") {
        okUntil = 0;
        return "degraded";
      }
      okUntil = performance.now() + CHECK_REUSE_MS;
      return "ok";
    } catch {
      okUntil = 0;
      return "unavailable";
    } finally {
      running = undefined;
    }
  };
  return {
    /** Calls `answer` with the result; at once (no promise) while an "ok" is fresh. */
    answer<T>(answer: (result: Check) => T): T | Promise<T> {
      if (performance.now() < okUntil) return answer("ok");
      running ??= run();
      return running.then(answer);
    },
  };
}
