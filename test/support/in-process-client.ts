// @svc/client against the app in process: its fetch is the app's handle (no socket).
import { createClient, type Client } from "../../client/src/index.ts";

interface HandlesRequests {
  app: { handle(request: Request): Promise<Response> };
}

/** A json-mode client of `svc` (what testApp returns), in memory. */
export function clientOf(svc: HandlesRequests): Client {
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => svc.app.handle(new Request(input, init));
  return createClient({ baseUrl: "http://localhost", fetch: fetch as typeof globalThis.fetch });
}

/** The failure `promise` ends in (null when it succeeds), for a test to look into. */
export function failure<T = unknown>(promise: Promise<unknown>): Promise<T | null> {
  return promise.then(
    () => null,
    (error: unknown) => error as T,
  );
}
