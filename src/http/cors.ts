// CORS through @elysiajs/cors, and only for the origins SVC_CORS_ORIGINS lists: closed by default.
// What a browser app may send and read comes from the lists below, which test/api/cors.test.ts holds
// against the routes and the OpenAPI document, so that a header svc documents cannot be left out.
import { cors } from "@elysiajs/cors";
import { Elysia } from "elysia";

/** Every method a route answers (test/api/cors.test.ts compares it with the app's routes). */
export const CORS_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * Every request header svc reads that is not CORS-safelisted. The custom ones among them are also what
 * makes a cookie-authenticated request "non-simple" (src/auth/cookie-session.ts): a cross-site form
 * cannot send them.
 */
export const CORS_REQUEST_HEADERS = [
  "authorization",
  "content-type",
  "if-match",
  "if-none-match",
  "idempotency-key",
  "x-request-id",
] as const;

/** Every response header a client acts on, beyond the safelisted ones (Content-Type and a few more). */
export const CORS_EXPOSED_HEADERS = [
  "etag",
  "location",
  "link",
  "retry-after",
  "www-authenticate",
  "idempotent-replayed",
  "x-request-id",
  "x-total-count",
] as const;

/** How long a browser may keep a preflight's answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export function corsFor(origins: string[]) {
  if (origins.length === 0) return new Elysia({ name: "svc/cors-closed" });
  const listed = new Set(origins);
  return (
    new Elysia({ name: "svc/cors" })
      // The plugin would add Allow-Credentials to every answer; svc says it to the listed origins alone
      // (a refresh cookie is the credential: src/auth/cookie-session.ts). Before the plugin's own hook,
      // so that the preflight it answers carries it too.
      .onRequest(({ request, set }) => {
        const origin = request.headers.get("origin");
        if (origin !== null && listed.has(origin)) set.headers["access-control-allow-credentials"] = "true";
      })
      .use(
        cors({
          origin: origins,
          methods: [...CORS_METHODS],
          allowedHeaders: [...CORS_REQUEST_HEADERS],
          exposeHeaders: [...CORS_EXPOSED_HEADERS],
          credentials: false,
          maxAge: PREFLIGHT_MAX_AGE_SECONDS,
        }),
      )
  );
}
