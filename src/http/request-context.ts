// Per-request facts (id, start time, caller, socket) kept beside the Request, for logs, error reports
// and per-client limits. A WeakMap because the Request is the one thing Elysia and Yoga both see.
import type { Server } from "bun";
import type { Listener } from "./exposure.ts";

export interface RequestInfo {
  /** svc's own id for the request, whatever the client sent: on every log line and audit event. */
  id: string;
  /**
   * The client's X-Request-Id when sane (1–128 of letters, digits and ._:-, so it needs no escaping in
   * a log line), else null. Kept beside `id`, never instead: a client must not choose the id its
   * requests are logged and audited under (nor give one the id of another).
   */
  clientId: string | null;
  startedAt: number;
  userId: string | null;
  /** The server that accepted the request; undefined when it was handed to the app in process. */
  server: Server<unknown> | undefined;
  /** The Request as the server received it: the one its socket (requestIP) is known by. */
  received: Request;
  /** The listener it came in on (src/http/exposure.ts). */
  listener: Listener;
}

const infos = new WeakMap<Request, RequestInfo>();
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Makes the request's id, and takes the caller's X-Request-Id beside it when it is sane. Kept beside
 * the request for whoever handles it; pass `keep: false` when nobody will look.
 */
export function beginRequest(
  request: Request,
  server: Server<unknown> | undefined,
  keep = true,
  received = request,
  listener: Listener = "public",
): RequestInfo {
  const given = request.headers.get("x-request-id");
  const info: RequestInfo = {
    id: Bun.randomUUIDv7(),
    clientId: given && ACCEPTABLE_ID.test(given) ? given : null,
    startedAt: performance.now(),
    userId: null,
    server,
    received,
    listener,
  };
  if (keep) infos.set(request, info);
  return info;
}

export function requestInfo(request: Request): RequestInfo | undefined {
  return infos.get(request);
}

/** The X-Request-Id an answer carries: the client's own back (echoed), or else svc's. */
export function answeredId(info: RequestInfo): string {
  return info.clientId ?? info.id;
}

/** The request's ids for the audit log (an Origin's): null when it was not begun here. */
export function auditIds(info: RequestInfo | undefined): { requestId: string | null; clientRequestId: string | null } {
  return { requestId: info?.id ?? null, clientRequestId: info?.clientId ?? null };
}

/** The request's ids for a log line's fields; the client's only when it sent one. */
export function logIds(info: Pick<RequestInfo, "id" | "clientId"> | undefined): {
  request_id?: string;
  client_request_id?: string;
} {
  if (!info) return {};
  return info.clientId === null ? { request_id: info.id } : { request_id: info.id, client_request_id: info.clientId };
}
