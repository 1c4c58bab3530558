// The health probes as Elysia routes, answered by probes.ts (which serve.ts also answers with before the
// app has loaded).
import { Elysia, type TSchema } from "elysia";
import { documented, ref } from "../http/openapi.ts";
import type { Probe, ProbeAnswer, Probes } from "./probes.ts";

/** The probes' paths: their 200s may go unlogged (SVC_LOG_PROBES), and they do not make svc busy. */
export const PROBE_PATHS = ["/svc/health", "/svc/health/live", "/svc/health/ready"] as const;

/** Whether this request may see /svc/health's details (src/http/exposure.ts). */
export type HealthDetails = (request: Request) => boolean;

export function healthRoutes(probes: Probes, details: HealthDetails) {
  // Elysia compiles a handler whose source returns a call's result as asynchronous (a promise and a turn
  // for every probe, bench/results.md, "Figures behind the code"); a bound function shows no source, so a probe answered from a
  // fresh check stays synchronous. The pipeline adds the headers every answer carries (request-pipeline.ts).
  const answer = (path: keyof Probes) => respond.bind(null, probes[path], details);
  return new Elysia({ name: "svc/health" })
    .get("/svc/health/live", answer("/svc/health/live"), {
      detail: documented({
        operationId: "live",
        summary: "The process is up",
        tag: "health",
        ok: { status: 200, description: "Up", schema: ref("Live") },
        errors: [],
      }),
    })
    .get("/svc/health/ready", answer("/svc/health/ready"), {
      detail: health("ready", "Ready to serve: the database answers (503 when it does not)", ref("Ready")),
    })
    .get("/svc/health", answer("/svc/health"), {
      detail: health(
        "health",
        "Service, status and the database check (503 when it does not answer); version, environment, database kind and uptime too outside production, on the operations listener, or to a client on the box",
        ref("Health"),
      ),
    });
}

/**
 * The probe's answer as its body, with status and content type in `set`: Elysia builds the Response once,
 * with the headers every answer carries (the pipeline writes them into `set.headers`) in the same step.
 */
function respond(
  probe: Probe,
  details: HealthDetails,
  { request, set }: { request: Request; set: Settable },
): string | Promise<string> {
  // Set now, not once a check has answered: Elysia maps a promise with `set` only if `set` says something
  // when the route returns (its mapResponse, adapter/bun/handler.mjs), else it sends the bare body.
  set.headers["content-type"] = "application/json";
  const answer = probe.answer(details(request));
  return answer instanceof Promise ? answer.then((given) => answered(given, set)) : answered(answer, set);
}

/** What a route may set of Elysia's `set`. */
interface Settable {
  status?: number | string;
  headers: Record<string, string | number>;
}

function answered({ status, body }: ProbeAnswer, set: Settable): string {
  set.status = status;
  return body;
}

function health(operationId: string, summary: string, schema: TSchema) {
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
