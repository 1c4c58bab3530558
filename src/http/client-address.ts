// Who is calling, for per-client limits. X-Forwarded-For counts only as far as SVC_TRUST_PROXY says:
// with n trusted proxies the client is the n-th address from the right, the one the outermost
// trusted proxy saw; anything to its left was written by the client and proves nothing.
import type { ClientInfo } from "../auth/sessions.ts";
import { auditIds, requestInfo } from "./request-context.ts";

export function clientAddress(request: Request, trustProxy: number): string {
  if (trustProxy > 0) {
    const hops = (request.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
    const seen = hops[hops.length - trustProxy];
    if (seen) return seen;
  }
  const info = requestInfo(request);
  return info?.server?.requestIP(info.received)?.address ?? "unknown";
}

/** Where a request came from, as its session and the audit log record it. */
export function clientInfo(request: Request, trustProxy: number): ClientInfo {
  return {
    address: clientAddress(request, trustProxy),
    userAgent: request.headers.get("user-agent"),
    ...auditIds(requestInfo(request)),
  };
}
