// The access line of an answered request and the headers every answer carries: the request pipeline's
// (request-pipeline.ts), and the health probes' before the app has loaded (listeners.ts), which must not
// load Elysia.
import type { Loggers } from "../observability/log.ts";
import { clientAddress } from "./client-address.ts";
import { answeredId, type RequestInfo } from "./request-context.ts";

export function logCompleted(
  access: Loggers["access"],
  request: Request,
  info: RequestInfo,
  route: string,
  path: string,
  status: number,
  seconds: number,
  trustProxy: number,
): void {
  if (!access.enabled) return;
  const agent = request.headers.get("user-agent");
  access.completed({
    requestId: info.id,
    clientRequestId: info.clientId,
    method: request.method,
    route,
    path,
    status,
    durationMs: Math.round(seconds * 100_000) / 100,
    userId: info.userId,
    clientAddress: clientAddress(request, trustProxy, info),
    // A header of any size must not make a line of any size.
    userAgent: agent === null ? null : agent.slice(0, MAX_USER_AGENT_CHARS),
  });
}

/** Enough for any real browser's or tool's User-Agent. */
const MAX_USER_AGENT_CHARS = 256;

/** HSTS for a year, svc's host only: includeSubDomains would bind hosts svc cannot know of (docs/operations.md). */
export const HSTS = "max-age=31536000";

/**
 * The headers every answer carries, into Elysia's `set.headers` (or a probe's own): a route's own
 * Cache-Control wins over no-store (the playground's fixed page is cached).
 */
export function stampHeaders(headers: Record<string, string | number>, info: RequestInfo, hsts: boolean): void {
  headers["x-content-type-options"] = "nosniff";
  // Every answer is live state or someone's own data: nothing may be cached on the way.
  headers["cache-control"] ??= "no-store";
  headers["x-request-id"] = answeredId(info);
  if (hsts) headers["strict-transport-security"] = HSTS;
}
