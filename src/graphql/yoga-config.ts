// What Yoga runs with, handed to @elysiajs/graphql-yoga: svc's schema and resolvers, the context each
// resolver gets, and the plugins (svc's request handling, the armor, metrics, error logging, and the
// WebSocket server, made once Yoga is).
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { getOperationAST, type GraphQLSchema } from "graphql";
import {
  createSchema,
  useErrorHandler,
  type Plugin,
  type YogaInitialContext,
  type YogaServerInstance,
} from "graphql-yoga";
import { armorPlugins } from "./armor.ts";
import type { GraphqlCaches } from "./caches.ts";
import type { GraphQLContext, ServerContext } from "./context.ts";
import { isUnexpected, maskError } from "./errors.ts";
import { databaseUnavailable } from "../log-dedupe.ts";
import type { GraphqlDeps } from "./index.ts";
import { operationLabels, operationMetrics, type OperationLabel } from "./operation-metrics.ts";
import { resolvers } from "./resolvers.ts";
import { limitKey } from "../http/client-address.ts";

export type YogaConfigDeps = GraphqlDeps & {
  caches: GraphqlCaches;
  typeDefs: string;
  /** svc's own part of a request (requests.ts). */
  requestPlugin: Plugin<{}, ServerContext>;
  /** Called once with the Yoga that the plugin made (for the WebSocket server, which runs operations through it). */
  onYoga: (yoga: YogaServerInstance<ServerContext, GraphQLContext>) => void;
};

export function yogaConfig(deps: YogaConfigDeps) {
  const { config, metrics, categories, logger, hub, caches, typeDefs, requestPlugin, onYoga } = deps;
  const label = operationLabels();
  // Widened to a plain GraphQLSchema: Yoga's context typing cannot name ours.
  const schema: GraphQLSchema = createSchema<GraphQLContext>({ typeDefs, resolvers });
  // The Elysia plugin hands Yoga the request alone: the server context starts empty, and requestPlugin
  // fills it in (ServerContext) before anything below reads it.
  const plugins = [
    yogaMade(onYoga),
    requestPlugin as Plugin,
    readBodyParser as Plugin,
    operationMetrics(metrics, label),
    cacheableOutcome(label) as Plugin,
    ...armorPlugins(config.introspection),
    ...(config.introspection ? [] : [useDisableIntrospection()]),
    useErrorHandler(({ errors, context, phase }) => {
      // In the execution phase envelop hands over the execution args, which hold the context.
      const ctx = (
        phase === "execution" ? (context as { contextValue: unknown }).contextValue : context
      ) as Partial<GraphQLContext>;
      // The database's unavailability too: the app's logger makes it one line per event (log-dedupe.ts).
      for (const err of errors.filter((error) => isUnexpected(error) || databaseUnavailable(error))) {
        const clientRequestId = ctx.origin?.clientRequestId ?? undefined;
        logger.error({ request_id: ctx.requestId, client_request_id: clientRequestId, err }, "graphql resolver failed");
      }
    }),
  ];
  return {
    schema,
    graphiql: false as const,
    landingPage: false,
    // requestPlugin has read the body within SVC_MAX_BODY_BYTES; Yoga's own limit would pipe it through a
    // stream a second time.
    maxRequestBodySize: false as const,
    parserAndValidationCache: caches.parser,
    logging: false,
    maskedErrors: { maskError },
    context(initial: YogaInitialContext): GraphQLContext {
      const { viewer, requestId, origin, authorization, tokenExpiresAt, transport } = initial as YogaInitialContext &
        ServerContext;
      // Over SSE, a reconnecting EventSource sends the last event's id (its cursor) as Last-Event-ID.
      const lastEventId = transport === "sse" ? initial.request.headers.get("last-event-id") : null;
      return {
        categories,
        viewer,
        auth: config.auth,
        requestId,
        origin,
        subscribe: (after) =>
          hub.subscribe({
            owner: viewer ? `user:${viewer.id}` : `client:${origin.address && limitKey(origin.address)}`,
            authorization: viewer ? authorization : null,
            expiresAt: viewer ? tokenExpiresAt : null,
            transport,
            after: after ?? (lastEventId || null),
          }),
      };
    },
    plugins,
  };
}

/** Hands over the Yoga the plugin made, once: Yoga calls onYogaInit as it is created. */
function yogaMade(onYoga: YogaConfigDeps["onYoga"]): Plugin {
  return { onYogaInit: ({ yoga }) => onYoga(yoga as unknown as YogaServerInstance<ServerContext, GraphQLContext>) };
}

/**
 * Hands the parser Yoga chose for the request (by method and Content-Type) the body requestPlugin read;
 * a clone of the request to read it twice would cost more than the rest of a cached answer. A parser
 * reads only the body (json, text or formData), which a Response over those bytes offers.
 */
const readBodyParser: Plugin<{}, ServerContext> = {
  onRequestParse({ request, requestParser, serverContext, setRequestParser }) {
    const { body } = serverContext;
    if (body === undefined || !requestParser) return;
    const contentType = request.headers.get("content-type") ?? "";
    setRequestParser(() =>
      requestParser(new Response(body, { headers: { "content-type": contentType } }) as unknown as Request),
    );
  },
};

/** Marks a query (never a mutation) that ran without errors: its answer may be cached. */
function cacheableOutcome(label: OperationLabel): Plugin<{}, ServerContext> {
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== "query") return;
      const { outcome } = args.contextValue as unknown as ServerContext;
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || (result.errors?.length ?? 0) > 0) return;
          outcome.operation = label(args.document, args.operationName);
        },
      };
    },
  };
}
