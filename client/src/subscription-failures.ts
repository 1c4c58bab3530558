// How a subscription's failure without an answer reads: a dropped stream, the network, or (on a page of
// another origin) CORS's refusal, told apart by whether svc answers a request that needs no permission.
import { SvcError } from "./errors.js";

export const CORS_TITLE = "Refused by the browser (CORS)";

/**
 * A fetch that failed without an answer on a page of another origin: CORS, when svc answers a request the
 * browser needs no permission for (a no-cors GET, whose answer the page cannot read but which resolves).
 */
export async function corsOrNetwork(
  baseUrl: string,
  pageOrigin: string,
  failure: SvcError,
  reachable: (origin: string) => Promise<boolean>,
): Promise<SvcError> {
  const svcOrigin = new URL(baseUrl).origin;
  if (pageOrigin === svcOrigin || !(await reachable(svcOrigin))) return failure;
  return new SvcError({
    status: 0,
    code: "network_error",
    title: CORS_TITLE,
    detail: `svc at ${svcOrigin} answers, but the browser refused its answer to this page: add ${pageOrigin} to svc's SVC_CORS_ORIGINS`,
    cause: failure,
  });
}

/** svc's health probe fetched without CORS: it resolves (opaque) whenever svc answers at all. */
export function answersNoCors(origin: string): Promise<boolean> {
  return fetch(`${origin}/svc/health/live`, { mode: "no-cors", credentials: "omit" }).then(
    () => true,
    () => false,
  );
}

/** A stream cut mid-way (the reader's own error). */
export function streamBroken(cause: unknown): SvcError {
  return new SvcError({
    status: 0,
    code: "network_error",
    title: "Connection dropped",
    detail: cause instanceof Error ? cause.message : String(cause),
    cause,
  });
}

/** The page's origin in a browser (or a worker); null elsewhere, where there is no CORS. */
export function browserOrigin(): string | null {
  return (globalThis as { location?: { origin?: string } }).location?.origin ?? null;
}
