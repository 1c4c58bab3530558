// What GraphQL runs with over both transports: svc's schema and resolvers, and the plugins (the armor,
// metrics, error logging and masking). Yoga gets them through @elysiajs/graphql-yoga, with a context
// factory that reads what the routes' hook learnt of the caller; graphql-ws gets the same plugins
// through an envelop of its own (graphql-ws's recipe for envelop), Yoga's being the plugin's to keep.
import { envelop, useEngine, useMaskedErrors, useSchema } from "@envelop/core";
import {
  execute,
  type GraphQLSchema,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  subscribe,
  validate,
} from "graphql";
import { createSchema, useErrorHandler, type Plugin, type YogaInitialContext } from "graphql-yoga";
import { clientAddress } from "../http/client-address.ts";
import { auditIds } from "../http/request-context.ts";
import { armorPlugins } from "./armor.ts";
import type { GraphqlCaches } from "./caches.ts";
import { type GraphQLContext, graphqlContext } from "./context.ts";
import { isUnexpected, maskError } from "./errors.ts";
import { databaseUnavailable } from "../observability/log-dedupe.ts";
import type { GraphqlDeps } from "./deps.ts";
import { operationMetrics } from "./operation-metrics.ts";
import type { Asked } from "./requests.ts";
import { resolvers } from "./resolvers.ts";

type YogaConfigDeps = GraphqlDeps & {
  caches: GraphqlCaches;
  typeDefs: string;
  /** What the routes' hook learnt of a request (requests.ts). */
  askedBy: (request: Request) => Asked;
};

/** The executable schema of each SDL, built once a process: the resolvers are the module's, the same for every app. */
const schemas = new Map<string, GraphQLSchema>();

function schemaOf(typeDefs: string): GraphQLSchema {
  let schema = schemas.get(typeDefs);
  if (!schema) {
    // Widened to a plain GraphQLSchema: Yoga's context typing cannot name ours.
    schema = createSchema<GraphQLContext>({ typeDefs, resolvers }) as GraphQLSchema;
    schemas.set(typeDefs, schema);
  }
  return schema;
}

export function yogaConfig(deps: YogaConfigDeps) {
  const { config, metrics, logger, caches, typeDefs, askedBy, trustProxy } = deps;
  const contextFor = graphqlContext({ ...deps, auth: config.auth });
  const schema = schemaOf(typeDefs);
  const plugins = [
    operationMetrics(metrics),
    ...armorPlugins(config.introspection),
    ...(config.introspection ? [] : [noIntrospection]),
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
  ] as Plugin[];
  const yoga = {
    schema,
    graphiql: false as const,
    landingPage: false,
    // The routes' hook has read the body within SVC_MAX_BODY_BYTES; Yoga's own limit would pipe it
    // through a stream a second time.
    maxRequestBodySize: false as const,
    parserAndValidationCache: caches.parser,
    logging: false,
    maskedErrors: { maskError },
    context({ request }: YogaInitialContext): GraphQLContext {
      const asked = askedBy(request);
      const { info } = asked;
      return contextFor({
        viewer: asked.viewer,
        authorization: request.headers.get("authorization"),
        tokenExpiresAt: asked.tokenExpiresAt,
        transport: "sse",
        requestId: info?.id,
        origin: { address: clientAddress(request, trustProxy), ...auditIds(info) },
        // A reconnecting EventSource sends the last event's id (its cursor) as Last-Event-ID.
        resumeAfter: request.headers.get("last-event-id") || null,
        outcome: asked.outcome,
      });
    },
    plugins: [bodyAsRead(askedBy), ...plugins],
  };
  /** The same schema and plugins for operations over WebSocket. */
  const enveloped = envelop({
    plugins: [
      useEngine({ parse, validate, execute, subscribe, specifiedRules }),
      useSchema(schema),
      ...plugins,
      useMaskedErrors({ maskError }),
    ],
  });
  return { yoga, enveloped, contextFor };
}

/**
 * Yoga's own parser (chosen by method and Content-Type) on a Request made again from the body the routes'
 * hook read, the request's own stream being spent.
 */
function bodyAsRead(askedBy: YogaConfigDeps["askedBy"]): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      const { text } = askedBy(request);
      if (text === undefined || !requestParser) return;
      const { url, method, headers } = request;
      setRequestParser(() => requestParser(new Request(url, { method, headers, body: text })));
    },
  };
}

/** Introspection refused, over either transport (Yoga's own plugin for this marks HTTP requests only). */
const noIntrospection: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
};
