// Per-request facts (id, start time, caller, socket) kept beside the Request, for logs, error reports
// and per-client limits. A WeakMap because the Request is the one thing Elysia and Yoga both see.
import type { Server } from "bun";

export interface RequestInfo {
  id: string;
  startedAt: number;
  userId: string | null;
  /** The server that accepted the request; undefined when it was handed to the app in process. */
  server: Server<unknown> | undefined;
  /** The Request as the server received it: the one its socket (requestIP) is known by. */
  received: Request;
}

const infos = new WeakMap<Request, RequestInfo>();
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Takes the caller's X-Request-Id when it is sane (so it needs no escaping in a log line), or makes
 * one. Kept beside the request for whoever handles it; pass `keep: false` when nobody will look.
 */
export function beginRequest(
  request: Request,
  server: Server<unknown> | undefined,
  keep = true,
  received = request,
): RequestInfo {
  const given = request.headers.get("x-request-id");
  const info: RequestInfo = {
    id: given && ACCEPTABLE_ID.test(given) ? given : Bun.randomUUIDv7(),
    startedAt: performance.now(),
    userId: null,
    server,
    received,
  };
  if (keep) infos.set(request, info);
  return info;
}

export function requestInfo(request: Request): RequestInfo | undefined {
  return infos.get(request);
}
