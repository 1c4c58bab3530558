// The GraphQL engine: Yoga with svc's schema, resolvers and plugins (the armor, metrics),
// and the WebSocket server beside it. Loaded on the first request that needs it (index.ts), not at
// start: a query answered from the kept answers needs none of it, and neither does a service used only
// over REST. It is the biggest part of svc to load (graphql-js, Yoga, the plugins): README, "Footprint".
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { getOperationAST, Kind, parse, type GraphQLSchema } from "graphql";
import { createSchema, createYoga, useErrorHandler, type Plugin } from "graphql-yoga";
import type { AppError } from "../errors.ts";
import { armorPlugins } from "./armor.ts";
import type { GraphqlCaches } from "./caches.ts";
import type { GraphQLContext, ServerContext } from "./context.ts";
import type { GraphqlDeps } from "./index.ts";
import { fromAppError, isUnexpected, maskError } from "./errors.ts";
import { asksForSchemaOnly } from "./introspection-only.ts";
import { operationLabels, operationMetrics, type OperationLabel } from "./operation-metrics.ts";
import { resolvers } from "./resolvers.ts";
import { graphqlWebSocket } from "./websocket.ts";

/** What the routes hand over (index.ts's own deps), with the caches they report and the schema's text. */
export type EngineDeps = Pick<
  GraphqlDeps,
  "config" | "metrics" | "categories" | "authenticator" | "logger" | "trustProxy" | "hub"
> & {
  caches: GraphqlCaches;
  typeDefs: string;
  endpoint: string;
  jsonType: string;
};

export type Engine = ReturnType<typeof createEngine>;

export function createEngine({
  config,
  metrics,
  categories,
  authenticator,
  logger,
  trustProxy,
  hub,
  caches,
  typeDefs,
  endpoint,
  jsonType,
}: EngineDeps) {
  const label = operationLabels();
  // Widened to a plain GraphQLSchema: Yoga's context typing cannot name ours.
  const schema: GraphQLSchema = createSchema<GraphQLContext>({ typeDefs, resolvers });
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: endpoint,
    graphiql: false,
    landingPage: false,
    cors: false,
    // serve() has read the body within SVC_MAX_BODY_BYTES; Yoga's own limit would pipe it through a
    // stream a second time.
    maxRequestBodySize: false,
    parserAndValidationCache: caches.parser,
    logging: false,
    maskedErrors: { maskError },
    context: ({ viewer, requestId, origin, authorization, transport }) => ({
      categories,
      viewer,
      auth: config.auth,
      requestId,
      origin,
      subscribe: () =>
        hub.subscribe({
          owner: viewer ? `user:${viewer.id}` : `client:${origin.address}`,
          authorization: viewer ? authorization : null,
          transport,
        }),
    }),
    plugins: [
      readBodyParser,
      operationMetrics(metrics, label),
      keepableOutcome(label),
      ...armorPlugins(config.introspection),
      ...(config.introspection ? [] : [useDisableIntrospection()]),
      useErrorHandler(({ errors, context, phase }) => {
        // In the execution phase envelop hands over the execution args, which hold the context.
        const ctx = (
          phase === "execution" ? (context as { contextValue: unknown }).contextValue : context
        ) as Partial<GraphQLContext>;
        for (const err of errors.filter(isUnexpected)) {
          const clientRequestId = ctx.origin?.clientRequestId ?? undefined;
          logger.error(
            { request_id: ctx.requestId, client_request_id: clientRequestId, err },
            "graphql resolver failed",
          );
        }
      }),
    ],
  });

  const websocket = graphqlWebSocket({
    yoga,
    authenticator,
    auth: config.auth,
    trustProxy,
    logger,
    onSlowReader: () => metrics.subscriptionDropped("slow"),
  });
  return {
    yoga,
    websocket,
    mutationOf,
    asksForSchemaOnly,
    /** A refusal (401, or the Idempotency-Key's own) in GraphQL's response shape, so GraphQL clients read it like any other error. */
    errorResponse: (error: AppError) =>
      new Response(JSON.stringify({ errors: [fromAppError(error).toJSON()] }), {
        status: error.status,
        headers: { ...error.headers, "content-type": jsonType },
      }),
  };
}

/**
 * Hands the parser Yoga chose for the request (by method and Content-Type) the body serve() read; a
 * clone of the request to read it twice would cost more than the rest of a cached answer (bun run
 * bench:micro). A parser reads only the body (json, text or formData), which a Response over those
 * bytes offers.
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

/** Marks a query (never a mutation) that ran without errors: its answer may be kept. */
function keepableOutcome(label: OperationLabel): Plugin<{}, ServerContext> {
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

/** A POST that names a mutation to run (the operation it selects). */
export interface MutationRequest {
  /** The request's JSON body: what a repeat under the same Idempotency-Key must match. */
  body: unknown;
  /** It asks for one root field alone: when that field fails, the whole mutation changed nothing. */
  single: boolean;
}

/** The mutation a request's JSON body names; null when it names none (or cannot be read). */
function mutationOf(text: string): MutationRequest | null {
  let request: { query?: unknown; operationName?: unknown };
  try {
    request = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof request?.query !== "string") return null;
  try {
    const name = typeof request.operationName === "string" ? request.operationName : undefined;
    const operation = getOperationAST(parse(request.query), name);
    if (operation?.operation !== "mutation") return null;
    const { selections } = operation.selectionSet;
    return { body: request, single: selections.length === 1 && selections[0]!.kind === Kind.FIELD };
  } catch {
    // Unparsable: Yoga answers it, and there is nothing to keep.
    return null;
  }
}
