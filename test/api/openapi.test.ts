import { describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { ERROR_CODES, statusOf, type ErrorCode } from "../../src/errors/index.ts";
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

interface Answer {
  description: string;
  content?: Record<string, { schema: Record<string, unknown> }>;
}
type Paths = Record<string, Record<string, { responses: Record<string, Answer> }>>;

/** Every answer the document lists, with its operation's path and method and its status. */
function answersOf(paths: Paths) {
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) =>
      Object.entries(operation.responses).map(([status, answer]) => ({ path, method, status, answer })),
    ),
  );
}

/** The codes an error answer narrows Problem.code to (allOf: Problem, then the narrowing). */
function problemCodes(answer: Answer): ErrorCode[] {
  const [, narrowing] = answer.content!["application/problem+json"]!.schema.allOf as [
    unknown,
    { properties: { code: { enum: ErrorCode[] } } },
  ];
  return narrowing.properties.code.enum;
}

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
        expect(operation.responses["401"].content["application/problem+json"].schema.allOf[0]).toEqual({
          $ref: "#/components/schemas/Problem",
        });
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
      "403",
      "409",
      "412",
      "413",
      "415",
      "422",
      "429",
      "500",
      "503",
    ]);
    // A write on the database: it may not answer, or its storage may be full.
    expect(create.responses["503"].content["application/problem+json"].schema.allOf[1].properties.code.enum).toEqual([
      "database_unavailable",
      "storage_full",
    ]);
    // Idempotent writes document the key and what a repeat is told.
    expect(create.parameters).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header" }));
    expect(create.responses["201"].headers).toHaveProperty("Idempotent-Replayed");
    expect(create.responses["409"].description).toContain("idempotency_key_in_flight");
    expect(create.responses["422"].description).toBe("idempotency_key_reused");
    // Sign-up control: each refusal its own code, and the per-client limit's 429 with Retry-After.
    expect(create.responses["403"].description).toBe("signup_closed, invitation_required, invalid_invitation");
    expect(create.responses["429"].description).toBe("too_many_requests, idempotency_keys_exhausted");
    expect(create.responses["429"].headers["Retry-After"]).toBeDefined();
    expect(create.requestBody.content["application/json"].schema.properties.invitation).toMatchObject({
      type: "string",
      maxLength: 128,
    });
    expect(create.requestBody.content["application/json"].schema.required.sort()).toEqual([
      "email",
      "password",
      "username",
    ]);
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
      "before",
      "count",
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
    expect(doc.components.schemas.TokenPair.properties.expires_in).toMatchObject({ type: "integer" });
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
      "addPasskey",
      "adminCreateUser",
      "adminDeleteUser",
      "adminGetBackups",
      "adminGetUser",
      "adminIssueInvitation",
      "adminIssuePasswordReset",
      "adminListAudit",
      "adminListInvitations",
      "adminListMail",
      "adminListUsers",
      "adminMarkEmailVerified",
      "adminRequestBackup",
      "adminResendMail",
      "adminResetSecondFactors",
      "adminRevokeInvitation",
      "adminUpdateUser",
      "changePassword",
      "confirmEmailChange",
      "confirmTotp",
      "createUser",
      "deleteMe",
      "endSession",
      "enrolTotp",
      "exchangeOidcCode",
      "getMe",
      "getMfa",
      "getUser",
      "health",
      "listIdentities",
      "listOidcProviders",
      "listPasskeys",
      "listSessions",
      "listUsers",
      "live",
      "login",
      "logout",
      "oidcCallback",
      "passkeyRegistrationOptions",
      "passkeySignIn",
      "passkeySignInOptions",
      "ready",
      "redeemPasswordReset",
      "refresh",
      "removePasskey",
      "removeTotp",
      "renamePasskey",
      "renewRecoveryCodes",
      "requestPasswordReset",
      "resendVerification",
      "startIdentityLink",
      "startOidcSignIn",
      "stepUpWebauthnOptions",
      "unlinkIdentity",
      "updateMe",
      "verifyEmail",
      "verifyMfa",
    ]);
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
  });

  test("names its schemas, and every answer and nested use refers to them", async () => {
    const { call } = await testApp();
    const doc = (await call("GET", "/svc-api/openapi.json")).body;
    const schemas = doc.components.schemas;
    const named = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const listOf = (name: string) => ({ type: "array", items: named(name) });
    expect(Object.keys(schemas).sort()).toEqual(
      [
        "PendingEmailChange",
        "ResetRequested",
        "AdminUser",
        "AuditEvent",
        "Backups",
        "BackupSnapshot",
        "Health",
        "HealthChecks",
        "Identity",
        "IdentityList",
        "Invitation",
        "IssuedInvitation",
        "IssuedReset",
        "Live",
        "Login",
        "Me",
        "OutboxMail",
        "Problem",
        "Ready",
        "Session",
        "TokenPair",
        "User",
        "VerificationResend",
        "MfaStatus",
        "TotpEnrolment",
        "RecoveryCodes",
        "MfaChallenge",
        "StepUp",
        "MfaWebauthnOptions",
        "OidcLinkStart",
        "OidcProviders",
        "Passkey",
        "PasskeyList",
        "PasskeyCreationOptions",
        "PasskeyRequestOptions",
      ].sort(),
    );
    const answers: [method: string, path: string, status: string, schema: object][] = [
      ["post", "/svc-api/v1/users/create", "201", named("Me")],
      ["get", "/svc-api/v1/users/all", "200", listOf("User")],
      ["get", "/svc-api/v1/users/me", "200", named("Me")],
      ["get", "/svc-api/v1/users/{user_id}", "200", named("User")],
      ["put", "/svc-api/v1/users", "200", named("Me")],
      ["put", "/svc-api/v1/users", "202", named("PendingEmailChange")],
      ["post", "/svc-api/v1/auth/password-reset/request", "202", named("ResetRequested")],
      ["get", "/svc-api/v1/auth/mfa", "200", named("MfaStatus")],
      ["post", "/svc-api/v1/auth/mfa/totp", "201", named("TotpEnrolment")],
      ["post", "/svc-api/v1/auth/mfa/totp/confirm", "200", named("RecoveryCodes")],
      ["post", "/svc-api/v1/auth/mfa/recovery-codes", "200", named("RecoveryCodes")],
      ["post", "/svc-api/v1/auth/mfa/verify", "200", { anyOf: [named("Login"), named("StepUp")] }],
      ["post", "/svc-api/v1/auth/mfa/webauthn/options", "200", named("MfaWebauthnOptions")],
      ["post", "/svc-api/v1/auth/email/confirm-change", "200", named("Me")],
      ["put", "/svc-api/v1/users/password", "200", named("TokenPair")],
      ["post", "/svc-api/v1/auth/login", "200", { anyOf: [named("Login"), named("MfaChallenge")] }],
      ["post", "/svc-api/v1/auth/refresh", "200", named("Login")],
      ["post", "/svc-api/v1/auth/password-reset", "200", { anyOf: [named("Login"), named("MfaChallenge")] }],
      ["get", "/svc-api/v1/auth/sessions", "200", listOf("Session")],
      ["post", "/svc-api/v1/auth/email/verify", "200", named("Me")],
      ["post", "/svc-api/v1/auth/email/verify/resend", "202", named("VerificationResend")],
      ["post", "/svc-api/v1/auth/passkeys/options", "200", named("PasskeyCreationOptions")],
      ["post", "/svc-api/v1/auth/passkeys", "201", named("Passkey")],
      ["get", "/svc-api/v1/auth/passkeys", "200", named("PasskeyList")],
      ["patch", "/svc-api/v1/auth/passkeys/{id}", "200", named("Passkey")],
      ["post", "/svc-api/v1/auth/passkeys/sign-in/options", "200", named("PasskeyRequestOptions")],
      ["post", "/svc-api/v1/auth/passkeys/sign-in", "200", named("Login")],
      ["get", "/svc-api/v1/admin/users", "200", listOf("AdminUser")],
      ["post", "/svc-api/v1/admin/users", "201", named("AdminUser")],
      ["get", "/svc-api/v1/admin/users/{id}", "200", named("AdminUser")],
      ["patch", "/svc-api/v1/admin/users/{id}", "200", named("AdminUser")],
      ["post", "/svc-api/v1/admin/users/{id}/password-reset", "201", named("IssuedReset")],
      ["post", "/svc-api/v1/admin/users/{id}/email-verified", "200", named("AdminUser")],
      ["get", "/svc-api/v1/admin/audit", "200", listOf("AuditEvent")],
      ["get", "/svc-api/v1/admin/mail", "200", listOf("OutboxMail")],
      ["post", "/svc-api/v1/admin/mail/{id}/resend", "200", named("OutboxMail")],
      ["post", "/svc-api/v1/admin/invitations", "201", named("IssuedInvitation")],
      ["get", "/svc-api/v1/admin/invitations", "200", listOf("Invitation")],
      ["get", "/svc-api/v1/admin/backups", "200", named("Backups")],
      ["post", "/svc-api/v1/admin/backups", "202", named("Backups")],
      ["get", "/svc-api/v1/auth/oidc", "200", named("OidcProviders")],
      ["post", "/svc-api/v1/auth/oidc/exchange", "200", named("Login")],
      ["get", "/svc-api/v1/auth/identities", "200", named("IdentityList")],
      ["post", "/svc-api/v1/auth/identities/{provider}", "200", named("OidcLinkStart")],
      ["get", "/svc/health/live", "200", named("Live")],
      ["get", "/svc/health/ready", "200", named("Ready")],
      ["get", "/svc/health/ready", "503", named("Ready")],
      ["get", "/svc/health", "200", named("Health")],
      ["get", "/svc/health", "503", named("Health")],
    ];
    for (const [method, path, status, schema] of answers) {
      const answer = doc.paths[path][method].responses[status].content["application/json"].schema;
      expect({ method, path, status, schema: answer }).toEqual({ method, path, status, schema });
    }
    // No answer of the API's own carries a schema inline.
    const jsonAnswers = answersOf(doc.paths).filter(({ answer }) => answer.content?.["application/json"]);
    expect(jsonAnswers.length).toBe(answers.length);
    // Nested uses too, and every named schema is used.
    expect(schemas.Login).toEqual({
      allOf: [named("TokenPair"), { type: "object", required: ["user"], properties: { user: named("Me") } }],
    });
    expect(schemas.Ready.properties.checks).toEqual(named("HealthChecks"));
    expect(schemas.Health.properties.checks).toEqual(named("HealthChecks"));
    expect(schemas.PasskeyList.properties.items).toEqual(listOf("Passkey"));
    const text = JSON.stringify(doc);
    for (const name of Object.keys(schemas))
      expect({ name, used: text.includes(`"#/components/schemas/${name}"`) }).toEqual({ name, used: true });
  });

  test("users/me is Me: the user with e-mail and role required, where User has them optional", async () => {
    const { call } = await testApp();
    const { User, Me } = (await call("GET", "/svc-api/openapi.json")).body.components.schemas;
    expect(User.required.sort()).toEqual(["created_at", "id", "updated_at", "username"]);
    expect(Me.required.sort()).toEqual([
      "created_at",
      "email",
      "email_verified",
      "email_verified_at",
      "id",
      "role",
      "updated_at",
      "username",
    ]);
    expect(Me.properties).toEqual(User.properties);
    expect(Me.properties.role.enum).toEqual(["user", "admin"]);
  });

  test("Problem.code lists every error code in the catalogue's order; each error answer narrows it to its own", async () => {
    const { call } = await testApp();
    const doc = (await call("GET", "/svc-api/openapi.json")).body;
    const code = doc.components.schemas.Problem.properties.code;
    expect(code).toMatchObject({ type: "string", enum: [...ERROR_CODES] });
    expect(code.enum.length).toBe(58);
    expect([code.enum[0], code.enum.at(-1)]).toEqual(["validation_failed", "oidc_provider_unavailable"]);
    expect(doc.components.schemas.Problem.required).toContain("code");

    const login = doc.paths["/svc-api/v1/auth/login"].post.responses;
    expect(login["401"].content["application/problem+json"].schema).toEqual({
      allOf: [
        { $ref: "#/components/schemas/Problem" },
        {
          type: "object",
          required: ["code"],
          properties: { code: { type: "string", enum: ["invalid_credentials"] } },
        },
      ],
    });
    expect(problemCodes(login["403"])).toEqual(["account_disabled", "csrf_refused"]);
    const logout = doc.paths["/svc-api/v1/auth/logout"].post.responses;
    expect(problemCodes(logout["401"])).toEqual(["invalid_refresh_token", "unauthorized"]);
    // Every error answer: its codes are those its description names, each answered with that status.
    for (const { path, method, status, answer } of answersOf(doc.paths)) {
      if (!answer.content?.["application/problem+json"]) continue;
      const codes = problemCodes(answer);
      const statuses = [...new Set(codes.map((c) => String(statusOf(c))))];
      expect({ path, method, status, codes: codes.join(", "), statuses }).toEqual({
        path,
        method,
        status,
        codes: answer.description,
        statuses: [status],
      });
    }
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
