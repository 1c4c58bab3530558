// POST/GET /graphql through Yoga, with the bearer check done before Yoga sees the request, repeated
// queries answered from the response cache, and GraphiQL at /graphql/playground when enabled.
import { yoga } from "@elysiajs/graphql-yoga";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { Elysia } from "elysia";
import type { GraphQLSchema } from "graphql";
import { createSchema, useErrorHandler } from "graphql-yoga";
import type { Authenticator } from "../auth/authenticator.ts";
import type { CategoryService } from "../categories/service.ts";
import type { Config } from "../config.ts";
import type { TableVersions, UserRecord } from "../db/store.ts";
import { AppError } from "../errors.ts";
import { readCapped } from "../http/json-body.ts";
import { continueRequest, requestInfo } from "../http/request-context.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import typeDefs from "../../schema/categories.graphql" with { type: "text" };
import type { GraphQLContext } from "./context.ts";
import { armorPlugins } from "./armor.ts";
import { asksForSchemaOnly } from "./introspection-only.ts";
import { CACHE_BOUNDS, graphqlCaches } from "./caches.ts";
import { fromAppError, isUnexpected, maskError } from "./errors.ts";
import { operationLabels, operationMetrics } from "./operation-metrics.ts";
import { playgroundResponse } from "./playground.ts";
import { cacheableAnswers, ResponseCache, type PendingAnswer } from "./response-cache.ts";
import { resolvers } from "./resolvers.ts";

export const GRAPHQL_PATH = "/graphql";
const utf8 = new TextDecoder();

export interface GraphqlDeps {
  config: Config["graphql"];
  metrics: Metrics;
  categories: CategoryService;
  authenticator: Authenticator;
  logger: Logger;
  /** The table versions, read before a request that may be answered from the response cache. */
  versions: () => Promise<TableVersions>;
  maxBodyBytes: number;
}

export function graphqlRoutes({
  config,
  metrics,
  categories,
  authenticator,
  logger,
  versions,
  maxBodyBytes,
}: GraphqlDeps) {
  // Only the Request crosses into Yoga, so the verified caller and the cache's key wait beside it.
  const viewers = new WeakMap<Request, UserRecord>();
  const pending = new WeakMap<Request, PendingAnswer>();
  const caches = graphqlCaches();
  const answers = new ResponseCache(CACHE_BOUNDS.responses.chars, CACHE_BOUNDS.responses.entries);
  metrics.reportCaches(() => ({ ...caches.sizes(), responses: answers.size }));
  const label = operationLabels();
  // Widened to a plain GraphQLSchema: the Elysia plugin's context typing cannot name ours.
  const schema: GraphQLSchema = createSchema<GraphQLContext>({ typeDefs, resolvers });

  const app = new Elysia({ name: "svc/graphql" })
    .onBeforeHandle(async (context) => {
      const { request, path } = context;
      if (path !== GRAPHQL_PATH && path !== `${GRAPHQL_PATH}/`) return;
      let viewer: UserRecord | undefined;
      let known: TableVersions | undefined;
      // Read once, within the size limit: the cache and the introspection check look at it.
      const body = request.method === "POST" ? await readCapped(request, maxBodyBytes) : undefined;
      const text = body && utf8.decode(body);
      const authorization = request.headers.get("authorization");
      const needsToken = config.auth === "required" || (config.auth === "mutations" && authorization);
      if (needsToken && !(config.introspection && asksForSchemaOnly(request, text))) {
        try {
          ({ user: viewer, versions: known } = await authenticator.authenticate(authorization));
          const info = requestInfo(request);
          if (info) info.userId = viewer.id;
        } catch (error) {
          if (error instanceof AppError) return graphqlErrorResponse(error);
          throw error;
        }
      }
      if (body === undefined || text === undefined) {
        if (viewer) viewers.set(request, viewer);
        return;
      }

      return answerOrForward(context, body, text, viewer, known);
    })
    .onAfterHandle(async ({ request, response, set }) => {
      const answer = pending.get(request);
      if (!answer?.operation || !(response instanceof Response) || response.status !== 200) return;
      const body = await response.text();
      const contentType = response.headers.get("content-type") ?? "application/json; charset=utf-8";
      answers.set(answer.key, { body, contentType, operation: answer.operation, versions: answer.versions });
      set.headers["content-type"] = contentType;
      return body;
    });

  /**
   * A POST's kept answer (a string, not a Response: Elysia would copy a Response to add svc's headers,
   * body as a stream), or nothing after pointing `context.request`, which the route hands Yoga, at a
   * Request holding the body read before. As bytes, since a string body would give a request sent
   * without Content-Type a text/plain one.
   */
  async function answerOrForward(
    context: { request: Request; set: { headers: Record<string, string | number> } },
    bytes: Uint8Array<ArrayBuffer>,
    text: string,
    viewer: UserRecord | undefined,
    known: TableVersions | undefined,
  ): Promise<string | undefined> {
    const { request } = context;
    const key = answers.key(viewer?.id ?? null, request.headers, text);
    const read = key === null ? undefined : (known ?? (await versions()));
    const hit = key === null || !read ? undefined : answers.get(key, read);
    if (hit) {
      metrics.graphqlOperation(hit.operation, "ok");
      context.set.headers["content-type"] = hit.contentType;
      return hit.body;
    }
    const forwarded = new Request(request.url, { method: "POST", headers: request.headers, body: bytes });
    continueRequest(request, forwarded);
    if (viewer) viewers.set(forwarded, viewer);
    if (key !== null && read) pending.set(forwarded, { key, versions: read });
    context.request = forwarded;
    return undefined;
  }

  // For code generators: the SDL needs no token, since introspection would tell anyone the same.
  if (config.introspection) {
    app.get(`${GRAPHQL_PATH}/schema.graphql`, ({ set }) => {
      set.headers["content-type"] = "text/plain; charset=utf-8";
      return typeDefs;
    });
  }

  if (config.playground) {
    app.get(`${GRAPHQL_PATH}/playground`, ({ request }) => playgroundResponse(request, GRAPHQL_PATH));
  }

  return app.use(
    yoga({
      path: GRAPHQL_PATH,
      schema,
      graphiql: false,
      landingPage: false,
      // The body was read above within SVC_MAX_BODY_BYTES; Yoga's own limit would pipe it through
      // a stream a second time (17 µs a request).
      maxRequestBodySize: false,
      parserAndValidationCache: caches.parser,
      logging: false,
      maskedErrors: { maskError },
      context: ({ request }): GraphQLContext => ({
        categories,
        viewer: viewers.get(request) ?? null,
        auth: config.auth,
        requestId: requestInfo(request)?.id,
      }),
      plugins: [
        // Compiles an operation into a function once it has run twice; one-off documents are not worth it.
        useGraphQlJit({}, { enableIf: caches.worthCompiling, cache: caches.compiled }),
        operationMetrics(metrics, label),
        cacheableAnswers(pending, label),
        ...armorPlugins(config.introspection),
        ...(config.introspection ? [] : [useDisableIntrospection()]),
        useErrorHandler(({ errors, context, phase }) => {
          // In the execution phase envelop hands over the execution args, which hold our context.
          const ctx = (
            phase === "execution" ? (context as { contextValue: unknown }).contextValue : context
          ) as Partial<GraphQLContext>;
          for (const err of errors.filter(isUnexpected))
            logger.error({ request_id: ctx.requestId, err }, "graphql resolver failed");
        }),
      ],
    }),
  );
}

/** A 401 in GraphQL's own response shape, so GraphQL clients can read it like any other error. */
function graphqlErrorResponse(error: AppError): Response {
  return new Response(JSON.stringify({ errors: [fromAppError(error).toJSON()] }), {
    status: error.status,
    headers: { ...error.headers, "content-type": "application/json; charset=utf-8" },
  });
}
