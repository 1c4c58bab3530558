// What every request gets inside Elysia: its id (the client's X-Request-Id beside it) in the context, the
// headers every answer carries, the body limit and, with an operations listener, 404 on the public one for
// the operations paths; once answered, its metrics and access line under the route Elysia matched. Sync
// hooks: async ones make every compiled handler async (bench/results.md, "#54: the pipeline in Elysia").
import { Elysia, StatusMap } from "elysia";
import { AppError } from "../errors/index.ts";
import type { Loggers } from "../observability/log.ts";
import type { Metrics } from "../observability/metrics.ts";
import { HSTS, logCompleted, stampHeaders } from "./access-line.ts";
import { tooLarge } from "./json-body.ts";
import { answeredId, beginRequest, logIds, type RequestInfo, socketOf } from "./request-context.ts";

/** `requestInfo` in a route's context: set by the pipeline's onRequest before any route's code runs. */
export const requestFacts = new Elysia({ name: "svc/request-facts" }).decorate(
  "requestInfo",
  undefined as unknown as RequestInfo,
);

export interface PipelineOptions {
  /** The health probes' paths: not the app's requests (requestsBegun); with `logProbes` false their 200s go unlogged. */
  probes: readonly string[];
  logProbes: boolean;
  loggers: Loggers;
  metrics: Metrics;
  maxBodyBytes: number;
  /** SVC_TRUST_PROXY: how the access line reads the client's address. */
  trustProxy: number;
  /** With an operations listener: whether a path is its alone, the public listener answering 404 (exposure.ts). */
  opsOnly?: ((path: string) => boolean) | null;
  /** Strict-Transport-Security on every answer of the public listener (production over TLS). */
  hsts?: boolean;
  /** CORS is open (cors.ts): @elysiajs/cors answers a preflight in its own onRequest, with a 204. */
  preflights?: boolean;
}

export function requestPipeline(options: PipelineOptions) {
  const { probes, logProbes, loggers, metrics, maxBodyBytes, trustProxy, opsOnly, hsts, preflights } = options;
  const probePaths = new Set(probes);
  const { logger, access } = loggers;
  const debug = logger.isLevelEnabled("debug");
  /** Requests handed to the app, probes aside: what tells a busy svc from an idle one. */
  let begun = 0;

  const plugin = new Elysia({ name: "svc/request-pipeline" })
    .use(requestFacts)
    .onRequest(function startRequest(context) {
      const { request, set } = context;
      // Elysia has read the path by now; its onRequest context carries it, untyped.
      const { path } = context as unknown as { path: string };
      const info = beginRequest(request, socketOf(request));
      (context as { requestInfo?: RequestInfo }).requestInfo = info;
      if (!probePaths.has(path)) begun++;
      if (debug) logger.debug({ ...logIds(info), method: request.method, path }, "request started");
      if (info.listener === "public" && opsOnly?.(path)) throw new AppError("not_found", `Nothing lives at ${path}.`);
      // Before anyone reads it; chunked bodies meet the limit in json-body.ts and, on a socket, Bun's
      // maxRequestBodySize (the adapter reads a refused body away: outer-handler.ts).
      if (Number(request.headers.get("content-length") ?? 0) > maxBodyBytes) throw tooLarge(maxBodyBytes);
      // The CORS plugin answers a preflight from its own onRequest, past which no hook runs: recorded now.
      if (preflights && request.method === "OPTIONS") {
        set.status = 204;
        answered({ request, requestInfo: info, route: undefined, path, set }, undefined);
      }
    })
    // Before the answer leaves: its line is there for whoever reads the log on getting it. A failure's
    // answer is problem-answers.ts's, which calls `answered` itself (Elysia maps no onError Response).
    .mapResponse({ as: "global" }, function finishRequest({ request, requestInfo, route, path, set, responseValue }) {
      // A hook whose source returns a call counts as async to Elysia (1.4.30's isAsync reads the source:
      // /(?:return|=>)\s?\S+\(|a(?:sync|wait)/), and would make every route's handler async.
      const copy = answered({ request, requestInfo, route, path, set }, responseValue);
      if (copy) return copy;
    });

  /**
   * Stamps an answer (a route's value, a Response, or a promise of either) with the headers every answer
   * carries, then counts and logs it; returns a stamped copy of a Response whose headers cannot change.
   */
  function answered(context: Answered, answer: unknown): Response | undefined | void {
    // A route that answers with a promise without being async: what Elysia sends is what it resolves to.
    if (answer instanceof Promise) return void answer.then((value: unknown) => answered(context, value), ignore);
    const { request, requestInfo, route, path, set } = context;
    // A route's failure reaches Elysia's mapResponse after problem-answers.ts has answered it.
    if (requestInfo.recorded) return;
    requestInfo.recorded = true;
    const strict = requestInfo.listener === "public" && hsts === true;
    const isResponse = answer instanceof Response;
    // Into the Response itself: Elysia copies a Response to merge `set.headers` into it.
    const copy = isResponse ? stampResponse(answer, requestInfo, strict) : undefined;
    if (!isResponse) stampHeaders(set.headers, requestInfo, strict);
    const seconds = (performance.now() - requestInfo.startedAt) / 1000;
    const status = isResponse ? answer.status : statusOf(set.status);
    // The template, not the path: ids in paths would make a label per user.
    const label = route || "unmatched";
    metrics.request(request.method, label, status, seconds);
    if (logProbes || status !== 200 || !probePaths.has(label))
      logCompleted(access, request, requestInfo, label, path, status, seconds, trustProxy);
    return copy;
  }
  return { plugin, answered, requestsBegun: () => begun };
}

const ignore = () => {};

/** The Response stamped (as stampHeaders does); a stamped copy when its headers cannot change (a fetch's). */
function stampResponse(response: Response, info: RequestInfo, hsts: boolean): Response | undefined {
  const headers = response.headers;
  try {
    headers.set("x-content-type-options", "nosniff");
    if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
    headers.set("x-request-id", answeredId(info));
    if (hsts) headers.set("strict-transport-security", HSTS);
    return undefined;
  } catch {
    const copy = new Response(response.body, response);
    return stampResponse(copy, info, hsts) ?? copy;
  }
}

/** What `answered` reads of Elysia's context. */
export interface Answered {
  request: Request;
  requestInfo: RequestInfo;
  route: string | undefined;
  path: string;
  set: { status?: number | keyof typeof StatusMap; headers: Record<string, string | number> };
}

function statusOf(status: number | keyof typeof StatusMap | undefined): number {
  return typeof status === "number" ? status : status === undefined ? 200 : StatusMap[status];
}
