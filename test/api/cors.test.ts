import { describe, expect, test } from "bun:test";
import { CORS_EXPOSED_HEADERS, CORS_METHODS, CORS_REQUEST_HEADERS } from "../../src/http/cors.ts";
import { testApp } from "../helpers.ts";

const APP = "https://app.example.com";
/** Request headers a browser sends without a preflight, and so need no listing (Fetch, "CORS-safelisted"). */
const SAFELISTED_REQUEST = new Set(["accept", "accept-language", "content-language", "range"]);
/** Response headers a script reads without their being exposed; Set-Cookie no script ever reads. */
const SAFELISTED_RESPONSE = new Set([
  "cache-control",
  "content-language",
  "content-length",
  "content-type",
  "expires",
  "last-modified",
  "pragma",
  "set-cookie",
]);

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { headers?: Record<string, unknown> };
}
interface Operation {
  parameters?: { name: string; in: string }[];
  security?: Record<string, string[]>[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
}

async function openApi(): Promise<OpenApiDocument> {
  const { call } = await testApp();
  return (await call("GET", "/svc-api/openapi.json")).body as OpenApiDocument;
}

describe("CORS from one list", () => {
  test("every method a route answers to is allowed", async () => {
    const { app } = await testApp();
    expect(app.routes.methods.length).toBeGreaterThan(3);
    for (const method of app.routes.methods) expect(CORS_METHODS as readonly string[]).toContain(method);
  });

  test("every request header the OpenAPI document names is allowed, Authorization included", async () => {
    const doc = await openApi();
    const named = new Set<string>(["content-type"]);
    for (const operations of Object.values(doc.paths)) {
      for (const op of Object.values(operations)) {
        for (const p of op.parameters ?? []) if (p.in === "header") named.add(p.name.toLowerCase());
        if (op.security?.some((s) => "bearer" in s)) named.add("authorization");
      }
    }
    // The request id a client may send is documented as a component, not per operation.
    named.add("x-request-id");
    for (const header of ["if-match", "if-none-match", "idempotency-key", "authorization"])
      expect(named).toContain(header);
    for (const header of named) {
      if (!SAFELISTED_REQUEST.has(header)) expect(CORS_REQUEST_HEADERS as readonly string[]).toContain(header);
    }
  });

  test("every response header the OpenAPI document names is exposed", async () => {
    const doc = await openApi();
    const named = new Set<string>();
    for (const operations of Object.values(doc.paths))
      for (const op of Object.values(operations))
        for (const answer of Object.values(op.responses))
          for (const header of Object.keys(answer.headers ?? {})) named.add(header.toLowerCase());
    for (const header of ["etag", "location", "link", "retry-after", "www-authenticate", "idempotent-replayed"])
      expect(named).toContain(header);
    for (const header of named) {
      if (!SAFELISTED_RESPONSE.has(header)) expect(CORS_EXPOSED_HEADERS as readonly string[]).toContain(header);
    }
  });

  test("a preflight for PATCH with every documented header passes for a listed origin", async () => {
    const { call } = await testApp({ config: { corsOrigins: [APP] } });
    const preflight = await call("OPTIONS", "/svc-api/v1/admin/users/x", {
      headers: {
        origin: APP,
        "access-control-request-method": "PATCH",
        "access-control-request-headers": CORS_REQUEST_HEADERS.join(","),
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(APP);
    expect(preflight.headers.get("access-control-allow-credentials")).toBe("true");
    const methods = preflight.headers.get("access-control-allow-methods")!.split(", ");
    expect(methods).toContain("PATCH");
    const allowed = preflight.headers.get("access-control-allow-headers")!.split(", ");
    for (const header of CORS_REQUEST_HEADERS) expect(allowed).toContain(header);
  });

  test("an answer to a listed origin exposes ETag and allows credentials; another origin gets neither", async () => {
    const { call, signUp } = await testApp({ config: { corsOrigins: [APP] } });
    const { token } = await signUp();
    const me = await call("GET", "/svc-api/v1/users/me", { token, headers: { origin: APP } });
    expect(me.status).toBe(200);
    expect(me.headers.get("etag")).toBeTruthy();
    expect(me.headers.get("access-control-allow-origin")).toBe(APP);
    expect(me.headers.get("access-control-allow-credentials")).toBe("true");
    expect(me.headers.get("access-control-expose-headers")!.split(", ")).toContain("etag");
    expect(me.headers.get("vary")).toContain("Origin");

    const other = await call("GET", "/svc-api/v1/users/me", { token, headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("GraphQL answers CORS from the same list, and never with *", async () => {
    const { call } = await testApp({ config: { corsOrigins: [APP] } });
    const preflight = await call("OPTIONS", "/graphql", {
      headers: {
        origin: APP,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,authorization,idempotency-key",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBe(APP);
    const evil = await call("POST", "/graphql", {
      body: { query: "{ __typename }" },
      headers: { origin: "https://evil.example" },
    });
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
  });
});
