// What every request goes through: a request id, the body limit, the one onError that turns
// failures into problem+json, and one log line at the end.
import { Elysia, ValidationError } from "elysia";
import { AppError, problemResponse, type FieldError } from "../errors.ts";
import type { Loggers } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { tooLarge } from "./json-body.ts";
import { beginRequest, requestInfo } from "./request-context.ts";

export interface PlumbingOptions {
  loggers: Loggers;
  metrics: Metrics;
  maxBodyBytes: number;
  /** Methods the app answers on a path; called only for unmatched requests. */
  methodsFor: (path: string) => string[];
}

export function plumbing({ loggers, metrics, maxBodyBytes, methodsFor }: PlumbingOptions) {
  const { logger, access } = loggers;
  const debug = logger.isLevelEnabled("debug");
  return new Elysia({ name: "svc/plumbing" })
    .onRequest(({ request, set }) => {
      const info = beginRequest(request);
      const headers = set.headers as Record<string, string>;
      headers["x-content-type-options"] = "nosniff";
      // Every answer is live state or someone's own data: nothing may be cached on the way.
      headers["cache-control"] = "no-store";
      headers["x-request-id"] = info.id;
      if (debug) {
        logger.debug({ request_id: info.id, method: request.method, path: new URL(request.url).pathname }, "request started");
      }
      // Refuse an oversized body before anyone reads it; chunked bodies meet the limit in json-body.ts
      // and, on a real socket, Bun's maxRequestBodySize.
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > maxBodyBytes) return problemResponse(tooLarge(maxBodyBytes));
    })
    .onError({ as: "global" }, ({ code, error, request, path }) => {
      const appError = toAppError(code, error, path, methodsFor);
      const info = requestInfo(request);
      if (info) info.errorStatus = appError.status;
      if (appError.status >= 500) logger.error({ request_id: info?.id, err: error }, "request failed");
      return problemResponse(appError);
    })
    .onAfterResponse({ as: "global" }, ({ request, set, responseValue, route, path }) => {
      const info = requestInfo(request);
      const status =
        info?.errorStatus ?? (responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200));
      const seconds = info ? (performance.now() - info.startedAt) / 1000 : 0;
      // The route template, not the path: ids in paths would make a label per user.
      const template = route || "unmatched";
      metrics.request(request.method, template, status, seconds);
      access.completed({
        requestId: info?.id ?? "",
        method: request.method,
        route: template,
        path,
        status,
        durationMs: Math.round(seconds * 100_000) / 100,
        userId: info?.userId ?? null,
      });
    });
}

function toAppError(code: unknown, error: unknown, path: string, methodsFor: (path: string) => string[]): AppError {
  if (error instanceof AppError) return error;
  switch (code) {
    case "PARSE": {
      const cause = (error as Error).cause;
      return cause instanceof AppError ? cause : new AppError("malformed_json", "The body is not valid JSON.");
    }
    case "VALIDATION":
      return validationError(error as ValidationError);
    case "NOT_FOUND": {
      const allowed = methodsFor(path);
      if (allowed.length === 0) return new AppError("not_found", `Nothing lives at ${path}.`);
      return new AppError("method_not_allowed", `${path} answers ${allowed.join(", ")}.`, {
        headers: { allow: allowed.join(", ") },
      });
    }
    default:
      return new AppError("internal", "Something went wrong on our side; the request id identifies it.", { cause: error });
  }
}

/** Elysia's schema failures as per-field errors, naming unknown fields as such. */
function validationError(error: ValidationError): AppError {
  const errors: FieldError[] = [];
  const unknown: string[] = [];
  for (const issue of error.all) {
    const field = "path" in issue && issue.path ? issue.path.slice(1).replaceAll("/", ".") : "body";
    if (errors.some((e) => e.field === field)) continue;
    const isUnknown = issue.summary?.includes("should not be provided") === true;
    if (isUnknown) unknown.push(field);
    errors.push({ field, message: isUnknown ? "is not a known field" : field === "body" ? "must be a JSON object" : issue.message.toLowerCase() });
  }
  const detail = unknown.length > 0 ? `Unknown field(s): ${unknown.join(", ")}.` : `Invalid value for ${errors.map((e) => e.field).join(", ")}.`;
  return new AppError("validation_failed", detail, { errors });
}
