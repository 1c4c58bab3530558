import { describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { testApp } from "../helpers.ts";

/** Each route and its auth: a Bearer token, none, or either (the body may carry the credential instead). */
const REST = [
  ["post", "/svc-api/v1/users/create", false],
  ["post", "/svc-api/v1/auth/login", false],
  ["post", "/svc-api/v1/auth/logout", "either"],
  ["get", "/svc-api/v1/users/all", true],
  ["get", "/svc-api/v1/users/{user_id}", true],
  ["get", "/svc-api/v1/users/me", true],
  ["put", "/svc-api/v1/users", true],
  ["put", "/svc-api/v1/users/password", true],
  ["delete", "/svc-api/v1/users", true],
  ["get", "/svc/health", false],
  ["get", "/svc/health/live", false],
  ["get", "/svc/health/ready", false],
] as const;

describe("GET /svc-api/openapi.json", () => {
  test("is a valid OpenAPI 3.1 document", async () => {
    const { call } = await testApp();
    const reply = await call("GET", "/svc-api/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe("3.1.0");
    const result = await new Validator().validate(reply.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test("describes every REST route: request schema, answers, problem+json errors, bearer security", async () => {
    const { call } = await testApp();
    const doc = (await call("GET", "/svc-api/openapi.json")).body;
    expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    expect(doc.components.schemas.Problem.properties.code.type).toBe("string");
    for (const [method, path, auth] of REST) {
      const operation = doc.paths[path]?.[method];
      expect({ path, method, documented: operation !== undefined }).toEqual({ path, method, documented: true });
      expect(operation.responses["500"].content["application/problem+json"]).toBeDefined();
      if (auth) {
        expect(operation.security).toEqual(auth === "either" ? [{ bearer: [] }, {}] : [{ bearer: [] }]);
        expect(operation.responses["401"].content["application/problem+json"].schema.$ref).toBe(
          "#/components/schemas/Problem",
        );
        expect(operation.responses["401"].headers["WWW-Authenticate"]).toBeDefined();
      } else {
        // Public, and saying so.
        expect(operation.security).toEqual([]);
      }
      for (const [status, answer] of Object.entries(
        operation.responses as Record<string, { headers?: Record<string, unknown> }>,
      )) {
        expect({ path, status, requestId: answer.headers?.["X-Request-Id"] }).toEqual({
          path,
          status,
          requestId: { $ref: "#/components/headers/RequestId" },
        });
      }
    }
    // Logout takes the session's refresh token in place of the Bearer token, and says what a bad one gets.
    const logout = doc.paths["/svc-api/v1/auth/logout"].post;
    expect(logout.requestBody.required).toBe(false);
    expect(Object.keys(logout.requestBody.content["application/json"].schema.properties)).toEqual([
      "scope",
      "refresh_token",
    ]);
    expect(logout.responses["401"].description).toBe("invalid_refresh_token, unauthorized");
    expect(logout.responses["429"].description).toBe("too_many_requests, idempotency_keys_exhausted");
    const create = doc.paths["/svc-api/v1/users/create"].post;
    expect(Object.keys(create.requestBody.content)).toEqual(["application/json"]);
    expect(create.requestBody.content["application/json"].schema.additionalProperties).toBe(false);
    expect(Object.keys(create.responses).sort()).toEqual([
      "201",
      "400",
      "409",
      "412",
      "413",
      "415",
      "422",
      "429",
      "500",
    ]);
    // Idempotent writes document the key and what a repeat is told.
    expect(create.parameters).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header" }));
    expect(create.responses["201"].headers).toHaveProperty("Idempotent-Replayed");
    expect(create.responses["409"].description).toContain("idempotency_key_in_flight");
    expect(create.responses["422"].description).toBe("idempotency_key_reused");
    // Conditional requests: reads carry ETag and answer 304; updates take If-Match and answer 412.
    const all = doc.paths["/svc-api/v1/users/all"].get;
    expect(all.responses["200"].headers).toHaveProperty("ETag");
    expect(all.responses["304"]).toBeDefined();
    const put = doc.paths["/svc-api/v1/users"].put;
    expect(put.parameters.map((p: { name: string }) => p.name)).toContain("If-Match");
    expect(put.responses["412"].description).toBe("precondition_failed");
    expect(create.responses["201"].headers.Location).toBeDefined();
    expect(doc.paths["/svc-api/v1/auth/login"].post.responses["429"]).toBeDefined();
    expect(doc.paths["/svc-api/v1/users/all"].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      "If-None-Match",
      "after",
      "limit",
    ]);
    expect(doc.paths["/svc/health"].get.responses["503"]).toBeDefined();
  });

  test("integers are integers, request schemas carry the rules, operations have readable ids, and the server is named", async () => {
    const { call } = await testApp();
    const doc = (await call("GET", "/svc-api/openapi.json")).body;
    expect(JSON.stringify(doc)).not.toContain('"format":"integer"');
    expect(doc.components.schemas.Problem.properties.status).toEqual({ type: "integer" });
    const login = doc.paths["/svc-api/v1/auth/login"].post;
    expect(login.responses["200"].content["application/json"].schema.properties.expires_in).toMatchObject({
      type: "integer",
    });
    expect(login.responses["429"].headers["Retry-After"].schema).toEqual({ type: "integer" });
    const limit = doc.paths["/svc-api/v1/users/all"].get.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 1000, default: 100 });
    expect(doc.paths["/svc-api/v1/users/all"].get.responses["200"].headers.Link).toBeDefined();

    const create = doc.paths["/svc-api/v1/users/create"].post.requestBody.content["application/json"].schema.properties;
    expect(create.username).toMatchObject({
      type: "string",
      minLength: 3,
      maxLength: 32,
      pattern: "^[A-Za-z0-9_.-]{3,32}$",
    });
    expect(create.email).toMatchObject({ type: "string", maxLength: 254 });
    expect(new RegExp(create.email.pattern).test("ann@example.com")).toBe(true);
    expect(new RegExp(create.email.pattern).test("ann@nodot")).toBe(false);
    expect(create.password).toMatchObject({ type: "string", minLength: 8, maxLength: 128 });
    expect(
      doc.paths["/svc-api/v1/users/password"].put.requestBody.content["application/json"].schema.properties
        .new_password,
    ).toMatchObject({ minLength: 8, maxLength: 128 });

    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((ops) =>
      Object.values(ops).map((o) => o.operationId),
    );
    expect(ids.sort()).toEqual([
      "adminDeleteUser",
      "adminGetUser",
      "adminIssuePasswordReset",
      "adminListAudit",
      "adminListUsers",
      "adminUpdateUser",
      "changePassword",
      "createUser",
      "deleteMe",
      "endSession",
      "getMe",
      "getUser",
      "health",
      "listSessions",
      "listUsers",
      "live",
      "login",
      "logout",
      "ready",
      "redeemPasswordReset",
      "refresh",
      "updateMe",
    ]);
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
  });

  test("leaves GraphQL, metrics and the docs themselves out", async () => {
    const { call } = await testApp();
    const paths = Object.keys((await call("GET", "/svc-api/openapi.json")).body.paths);
    expect(
      paths.filter(
        (p) =>
          p.startsWith("/graphql") ||
          p.startsWith("/svc/metrics") ||
          p.startsWith("/svc-api/docs") ||
          p.includes("openapi"),
      ),
    ).toEqual([]);
  });
});

describe("GET /svc-api/docs", () => {
  test("serves an interactive reference whose assets come from svc itself", async () => {
    const { call } = await testApp();
    const page = await call("GET", "/svc-api/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    expect(page.text).toContain("/svc-api/openapi.json");
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(source).toStartWith("/svc-api/docs/assets/");
      const asset = await call("GET", source);
      expect(asset.status).toBe(200);
      expect(asset.text.length).toBeGreaterThan(100_000);
    }
  });
});
