// Who is calling, for per-client limits. X-Forwarded-For counts only as far as SVC_TRUST_PROXY says:
// with n trusted proxies the client is the n-th address from the right, the one the outermost
// trusted proxy saw; anything to its left was written by the client and proves nothing.
import type { ClientInfo } from "../auth/sessions.ts";
import { peerAddress } from "./peer-address.ts";
import { auditIds, type RequestInfo, type Socket, socketOf } from "./request-context.ts";

export function clientAddress(request: Request, trustProxy: number, socket: Socket = socketOf(request)): string {
  if (trustProxy > 0) {
    const hops = (request.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
    const seen = hops[hops.length - trustProxy];
    if (seen) return seen;
  }
  return peerAddress(socket) ?? "unknown";
}

/** Where a request came from, as its session and the audit log record it (`info`: Elysia's context's). */
export function clientInfo(request: Request, trustProxy: number, info: RequestInfo): ClientInfo {
  return {
    address: clientAddress(request, trustProxy, info),
    userAgent: request.headers.get("user-agent"),
    ...auditIds(info),
  };
}
