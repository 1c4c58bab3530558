// Per-request facts (id, start time, caller, socket), made by the request pipeline, travel in Elysia's context
// as `requestInfo`. One side channel by the Request: its socket, which the server adapter knows before
// Elysia runs.
import type { Server } from "bun";

/** Which of svc's listeners a request came in on. */
export type Listener = "public" | "ops";

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
  /** Whether its answer is counted and logged (request-pipeline.ts): once, whichever hook sees it first. */
  recorded: boolean;
}

/** What the server adapter knows of a request's socket and Elysia does not carry. */
export type Socket = Pick<RequestInfo, "server" | "received" | "listener">;

const sockets = new WeakMap<Request, Socket>();
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Called by the server adapter before Elysia sees the request. */
export function arrivedOn(request: Request, socket: Socket): void {
  sockets.set(request, socket);
}

/** The request's socket; a request handed over in process without one came in on the public listener. */
export function socketOf(request: Request): Socket {
  return sockets.get(request) ?? { server: undefined, received: request, listener: "public" };
}

/** Makes the request's id, and takes the caller's X-Request-Id beside it when it is sane. */
export function beginRequest(request: Request, socket: Socket): RequestInfo {
  const given = request.headers.get("x-request-id");
  return {
    id: Bun.randomUUIDv7(),
    clientId: given && ACCEPTABLE_ID.test(given) ? given : null,
    startedAt: performance.now(),
    userId: null,
    recorded: false,
    ...socket,
  };
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
