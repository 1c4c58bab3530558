// Property-based fuzzing: malformed and hostile requests at every route. Whatever arrives, svc never
// answers 5xx, every REST error is problem+json, every GraphQL error has a code, and no bad input
// changes a user, a category, a session or a revocation (failed-login counters are meant to change).
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Store } from "../../src/db/store.ts";
import { testApp, promote } from "../helpers.ts";

type App = Awaited<ReturnType<typeof testApp>>;

const ROUTES = [
  "/svc-api/v1/users/create",
  "/svc-api/v1/auth/login",
  "/svc-api/v1/auth/logout",
  "/svc-api/v1/auth/refresh",
  "/svc-api/v1/auth/sessions",
  "/svc-api/v1/auth/sessions/01937a6e-0000-7000-8000-000000000000",
  "/svc-api/v1/users/all",
  "/svc-api/v1/users/",
  "/svc-api/v1/users/password",
  "/svc-api/v1/users/01937a6e-0000-7000-8000-000000000000",
  "/svc-api/v1/auth/password-reset",
  "/svc-api/v1/admin/users",
  "/svc-api/v1/admin/users/01937a6e-0000-7000-8000-000000000000",
  "/svc-api/v1/admin/users/01937a6e-0000-7000-8000-000000000000/password-reset",
  "/svc-api/v1/admin/audit",
  "/svc/health",
  "/graphql",
  "/graphql/playground",
];
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "application/graphql",
  ";;",
  "",
];
const FIELDS = [
  "username",
  "email",
  "password",
  "current_password",
  "new_password",
  "refresh_token",
  "scope",
  "reset_code",
  "role",
  "status",
  "query",
  "variables",
  "operationName",
  "__proto__",
  "constructor",
];

const segment = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("..", "%00", "%2e%2e", "users", "all", "v1", "svc-api", "graphql", "💥", "%ff"),
);
const path = fc.oneof(
  fc.constantFrom(...ROUTES),
  fc.tuple(fc.constantFrom(...ROUTES), segment).map(([route, extra]) => `${route}${extra}`),
  fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join("/")}`),
  fc.tuple(fc.constantFrom(...ROUTES), fc.string({ maxLength: 30 })).map(([route, q]) => `${route}?${q}`),
);
const hostileValue = fc.oneof(
  fc.anything(),
  fc.string({ maxLength: 300 }),
  fc.constantFrom(
    "",
    " ",
    "a".repeat(2000),
    "\u0000",
    "'; DROP TABLE users; --",
    "${7*7}",
    "<script>",
    "🔑".repeat(200),
  ),
);
const body = fc.oneof(
  fc.json(),
  fc.string({ maxLength: 200 }),
  fc.dictionary(fc.constantFrom(...FIELDS), hostileValue, { maxKeys: 5 }).map((o) => JSON.stringify(o)),
  fc.constantFrom("{", "[", "{}", "[]", "null", '{"a":' + "[".repeat(50), "\uFEFF{}", '{"username":"x"}{"y":1}'),
);

const GRAPHQL_PIECES = [
  "{",
  "}",
  "(",
  ")",
  ":",
  "$input",
  "query",
  "mutation",
  "categories",
  "listAllCategories",
  "category",
  "createCategory",
  "updateCategory",
  "deleteCategory",
  "id",
  "name",
  "colorHex",
  "input",
  "__schema",
  "__typename",
  "@skip(if: true)",
  "...",
  "fragment",
  "on",
  "Category",
  '"x"',
  "1",
  "null",
  "#",
];
const graphqlDocument = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.array(fc.constantFrom(...GRAPHQL_PIECES), { maxLength: 40 }).map((parts) => parts.join(" ")),
  fc.constantFrom(
    "{ categories { id } }",
    "{ category(id: 1) { id } }",
    "query($id: ID!) { category(id: $id) { id } }",
  ),
);

interface Snapshot {
  users: unknown;
  categories: unknown;
  sessions: unknown;
  revoked: boolean;
}

async function snapshot(store: Store, userId: string, jti: string): Promise<Snapshot> {
  return {
    users: await store.users.list({ limit: 1000 }),
    categories: await store.categories.list(),
    sessions: await store.sessions.list(userId, "2000-01-01T00:00:00.000Z"),
    revoked: (await store.tokenHolder(userId, jti))?.revoked ?? true,
  };
}

async function expectWellFormed(response: Response, path: string): Promise<void> {
  expect(response.status).toBeLessThan(500);
  if (response.status < 400) return;
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  if (path.startsWith("/graphql") && type.startsWith("application/json")) {
    const errors = JSON.parse(text).errors as Array<{ extensions?: { code?: unknown } }>;
    for (const error of errors) expect(typeof error.extensions?.code).toBe("string");
  } else if (response.status !== 413 || text !== "") {
    // (Bun's own 413 for a body far past the limit is bodiless; everything else is svc's problem+json.)
    expect(type).toBe("application/problem+json");
    expect(typeof JSON.parse(text).code).toBe("string");
  }
}

describe("fuzzing every route", () => {
  let app: App;
  let token: string;
  let userId: string;
  let jti: string;
  let before: Snapshot;

  beforeAll(async () => {
    app = await testApp();
    const owner = await app.signUp("owner");
    // An administrator's token, so that its reads reach the admin routes' own checks.
    await promote(app.store, owner.user.id);
    token = owner.token;
    userId = owner.user.id;
    jti = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()).jti;
    await app.graphql('mutation { createCategory(input: { name: "Existing" }) { id } }', { token });
    before = await snapshot(app.store, userId, jti);
  });

  test("hostile REST requests: never 5xx, always problem+json, nothing changed", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        path,
        fc.option(body),
        fc.constantFrom(...CONTENT_TYPES),
        fc.constantFrom("none", "garbage", "valid"),
        fc.option(fc.string({ maxLength: 80 })),
        async (method, target, payload, contentType, auth, requestId) => {
          // A valid token may only read: with it, a random body could by chance be a valid change.
          const useToken = auth === "valid" && (method === "GET" || method === "OPTIONS");
          const headers: Record<string, string> = {};
          if (contentType) headers["content-type"] = contentType;
          if (useToken) headers.authorization = `Bearer ${token}`;
          if (auth === "garbage") headers.authorization = `Bearer ${payload ?? "x"}`.replace(/[^\x20-\x7e]/g, "");
          if (requestId) headers["x-request-id"] = requestId.replace(/[^\x20-\x7e]/g, "");
          const hasBody = payload !== null && method !== "GET" && method !== "OPTIONS";
          let request: Request;
          try {
            request = new Request(`http://localhost${target}`, {
              method,
              headers,
              body: hasBody ? payload : undefined,
            });
          } catch {
            return; // not even a valid HTTP request: nothing reaches svc
          }
          await expectWellFormed(await app.app.handle(request), new URL(request.url).pathname);
        },
      ),
      { numRuns: 400 },
    );
    expect(await snapshot(app.store, userId, jti)).toEqual(before);
  }, 120_000);

  test("hostile GraphQL documents and variables: never 5xx, every error has a code, nothing changed", async () => {
    await fc.assert(
      fc.asyncProperty(
        graphqlDocument,
        fc.option(fc.jsonValue()),
        fc.option(fc.string({ maxLength: 20 })),
        async (query, variables, operationName) => {
          // Mutations are sent without a token: a fuzzed input could by chance be a valid one.
          const mutating = /mutation/i.test(query);
          const reply = await app.call("POST", "/graphql", {
            body: { query, variables, operationName },
            token: mutating ? undefined : token,
          });
          expect(reply.status).toBeLessThan(500);
          for (const error of reply.body?.errors ?? []) expect(typeof error.extensions?.code).toBe("string");
        },
      ),
      { numRuns: 400 },
    );
    expect(await snapshot(app.store, userId, jti)).toEqual(before);
  }, 120_000);
});
