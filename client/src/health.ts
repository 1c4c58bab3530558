// svc's health (`GET /svc/health`), for a status display such as the admin console's strip: no token sent.
import { problemError, unexpectedAnswer } from "./errors.js";
import { answerOf, type Http } from "./http.js";
import type { components } from "./openapi.generated.js";

/** svc's health answer; how much it says depends on who asks (docs/operations.md, "Health"). */
export type Health = components["schemas"]["Health"];

/**
 * svc's health: what it answers while its database answers (200) and while it does not (503, status
 * "unavailable": svc answering, not a failure of the call). Anything else throws SvcError: network_error for
 * no answer, svc's own code for its problem answer, unexpected_response for an answer that is not svc's (a
 * proxy's error page in its place).
 */
export async function readHealth(http: Http, signal?: AbortSignal): Promise<Health> {
  const response = await http.send({ method: "GET", path: "/svc/health", ...(signal && { signal }) }, null);
  // A 503 is svc's own answer here, its body the health document as with a 200; another 503 (a proxy's
  // maintenance page) is read as any failure is, its Retry-After and text kept.
  if (response.status === 503) {
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as Partial<Health> | null;
    if (isHealth(body)) return body;
    throw await problemError(response);
  }
  const body = await answerOf<Partial<Health> | null>(response);
  if (isHealth(body)) return body;
  throw unexpectedAnswer(response, `HTTP ${response.status} that is not svc's health`);
}

function isHealth(body: Partial<Health> | null): body is Health {
  return typeof body?.status === "string" && typeof body.checks === "object" && body.checks !== null;
}
