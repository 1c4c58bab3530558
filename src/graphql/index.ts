// POST/GET /graphql through Yoga, with the bearer check done before Yoga sees the request,
// and GraphiQL at /graphql/playground when enabled.
import { yoga } from "@elysiajs/graphql-yoga";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { Elysia } from "elysia";
import type { GraphQLSchema } from "graphql";
import { createSchema, useErrorHandler } from "graphql-yoga";
import type { Authenticator } from "../auth/authenticator.ts";
import type { CategoryService } from "../categories/service.ts";
import type { Config } from "../config.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError } from "../errors.ts";
import { requestInfo } from "../http/request-context.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import typeDefs from "../../schema/categories.graphql" with { type: "text" };
import type { GraphQLContext } from "./context.ts";
import { armorPlugins } from "./armor.ts";
import { fromAppError, isUnexpected, maskError } from "./errors.ts";
import { operationMetrics } from "./operation-metrics.ts";
import { playgroundPage } from "./playground.ts";
import { resolvers } from "./resolvers.ts";

export const GRAPHQL_PATH = "/graphql";

export interface GraphqlDeps {
  config: Config["graphql"];
  metrics: Metrics;
  categories: CategoryService;
  authenticator: Authenticator;
  logger: Logger;
}

export function graphqlRoutes({ config, metrics, categories, authenticator, logger }: GraphqlDeps) {
  // Only the Request crosses into Yoga, so the verified caller waits beside it.
  const viewers = new WeakMap<Request, UserRecord>();
  // Widened to a plain GraphQLSchema: the Elysia plugin's context typing cannot name ours.
  const schema: GraphQLSchema = createSchema<GraphQLContext>({ typeDefs, resolvers });

  const app = new Elysia({ name: "svc/graphql" }).onBeforeHandle(async ({ request, path }) => {
    if (path !== GRAPHQL_PATH && path !== `${GRAPHQL_PATH}/`) return;
    const authorization = request.headers.get("authorization");
    if (config.auth === "off" || (config.auth === "mutations" && !authorization)) return;
    try {
      const { user: viewer } = await authenticator.authenticate(authorization);
      viewers.set(request, viewer);
      const info = requestInfo(request);
      if (info) info.userId = viewer.id;
    } catch (error) {
      if (error instanceof AppError) return graphqlErrorResponse(error);
      throw error;
    }
  });

  if (config.playground) {
    app.get(`${GRAPHQL_PATH}/playground`, async () => {
      return new Response(await playgroundPage(GRAPHQL_PATH), { headers: { "content-type": "text/html; charset=utf-8" } });
    });
  }

  return app.use(
    yoga({
      path: GRAPHQL_PATH,
      schema,
      graphiql: false,
      landingPage: false,
      logging: false,
      maskedErrors: { maskError },
      context: ({ request }): GraphQLContext => ({
        categories,
        viewer: viewers.get(request) ?? null,
        auth: config.auth,
        requestId: requestInfo(request)?.id,
      }),
      plugins: [
        // Compiles each distinct operation into a function once; Yoga already caches parse and validate.
        useGraphQlJit(),
        operationMetrics(metrics),
        ...armorPlugins(config.introspection),
        ...(config.introspection ? [] : [useDisableIntrospection()]),
        useErrorHandler(({ errors, context, phase }) => {
          // In the execution phase envelop hands over the execution args, which hold our context.
          const ctx = (phase === "execution" ? (context as { contextValue: unknown }).contextValue : context) as Partial<GraphQLContext>;
          for (const err of errors.filter(isUnexpected)) logger.error({ request_id: ctx.requestId, err }, "graphql resolver failed");
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
