// The audit log's vocabulary: what can be recorded, and how an event is made. Knows nothing of HTTP.
import type { AuditEvent } from "../db/records.ts";

export { AUDIT_ACTIONS, type AuditAction, isAuditAction } from "./actions.ts";
import type { AuditAction } from "./actions.ts";

/** Where an action came from: the client's address and the request's id (the CLI has no request). */
export interface Origin {
  address: string | null;
  /** svc's own id for the request, never the client's. */
  requestId: string | null;
  /** The X-Request-Id the client sent, when sane: kept in the event's detail as client_request_id. */
  clientRequestId?: string | null;
}

/** The origin of what the CLI does on the box. */
export const CLI_ORIGIN: Origin = { address: "cli", requestId: null };

export interface EventFacts {
  actor?: string | null;
  target?: string | null;
  origin: Origin;
  failed?: boolean;
  /** Non-secret particulars. Never a password, token, code or hash. */
  detail?: Record<string, unknown>;
}

/** An event happening now. */
export function auditEvent(action: AuditAction, facts: EventFacts, at = new Date().toISOString()): AuditEvent {
  const clientRequestId = facts.origin.clientRequestId;
  const detail = clientRequestId ? { ...facts.detail, client_request_id: clientRequestId } : facts.detail;
  return {
    // Stamped with the event's own time, so id order is the log's order.
    id: Bun.randomUUIDv7("hex", Date.parse(at)),
    at,
    action,
    actorId: facts.actor ?? null,
    targetId: facts.target ?? null,
    clientAddress: facts.origin.address,
    requestId: facts.origin.requestId,
    outcome: facts.failed ? "failure" : "success",
    detail: detail ? JSON.stringify(detail) : null,
  };
}
