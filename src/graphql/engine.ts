// The GraphQL engine: Yoga with svc's schema, resolvers and plugins (graphql-jit, the armor, metrics),
// and the WebSocket server beside it. Loaded on the first request that needs it (index.ts), not at
// start: a query answered from the kept answers needs none of it, and neither does a service used only
// over REST. It is the biggest part of svc to load (graphql-js, Yoga, the plugins): docs/performance.md, "Footprint".
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import {
  type DocumentNode,
  type FieldNode,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import { createSchema, createYoga, useErrorHandler, type Plugin } from "graphql-yoga";
import { then } from "../awaitable.ts";
import type { AppError } from "../errors.ts";
import { armorPlugins } from "./armor.ts";
import type { GraphqlCaches } from "./caches.ts";
import type { jitPlugin } from "./jit.ts";
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
      ...(config.jit ? [compiledOnRepeat(caches)] : []),
      requestErrorsAre400(),
      errorsAsGraphqlJs(),
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
 * With SVC_GRAPHQL_JIT, graphql-jit for a document run again after a run of it finished (caches.ts):
 * one-off documents are not worth compiling, and a query is answered from the kept answers after its
 * first run. The compiler is loaded by the first run it compiles, which waits for it (some
 * milliseconds, once). Off by default: it holds some 4 MB once loaded, for about a fifth off the time of
 * an operation not answered from the kept answers (docs/performance.md, "Footprint").
 */
function compiledOnRepeat(caches: GraphqlCaches): Plugin {
  type Jit = ReturnType<typeof jitPlugin>;
  let jit: Jit | undefined;
  let loading: Promise<Jit> | undefined;
  const load = (): Jit | Promise<Jit> =>
    jit ?? (loading ??= import("./jit.ts").then(({ jitPlugin }) => (jit = jitPlugin(caches))));
  return {
    onExecute(payload) {
      if (!caches.worthCompiling(payload.args)) return { onExecuteDone: () => caches.ran(payload.args) };
      return then(load(), (plugin) => plugin.onExecute?.(payload));
    },
    onSubscribe(payload) {
      if (!caches.worthCompiling(payload.args)) return caches.ran(payload.args);
      return then(load(), (plugin) => plugin.onSubscribe?.(payload));
    },
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

/**
 * An execution that could not start (a variable of the wrong type, a missing one) is the client's
 * request error: 400. Yoga's own executor marks it so; graphql-jit, which runs an operation from its
 * second time on, does not, and the same bad request would turn from 400 into 200.
 */
function requestErrorsAre400(): Plugin<{}, ServerContext> {
  return {
    onExecute: () => ({
      onExecuteDone({ result, setResult }) {
        if (Symbol.asyncIterator in result || "data" in result || !result.errors?.length) return;
        setResult({
          ...result,
          errors: result.errors.map(
            (error) =>
              new GraphQLError(error.message, {
                nodes: error.nodes,
                source: error.source,
                positions: error.positions,
                path: error.path,
                originalError: error.originalError,
                extensions: { ...error.extensions, http: { ...(error.extensions?.http as object), status: 400 } },
              }),
          ),
        });
      },
    }),
  };
}

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

/**
 * An answer with errors as graphql-js writes it (errors first, each with the locations of its fields)
 * however it was executed: graphql-jit, which runs an operation from its second run once kept, wrote
 * data first and its errors lost their locations on the way out, so one request got other bytes on its
 * first runs than on later ones.
 */
function errorsAsGraphqlJs(): Plugin {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result || result.errors === undefined) return;
          const errors = result.errors.map((error) => {
            // graphql-jit's errors carry their locations but not the nodes, which masking (errors.ts)
            // rebuilds an error from.
            if (error.nodes !== undefined || error.path === undefined) return error;
            return new GraphQLError(error.message, {
              nodes: fieldNodesAt(args.document, args.operationName, error.path),
              path: error.path,
              originalError: error.originalError,
              extensions: error.extensions,
            });
          });
          const { data, extensions } = result;
          setResult(extensions === undefined ? { errors, data } : { errors, data, extensions });
        },
      };
    },
  };
}

/** The field nodes a response path names (those merged under one key, through fragments), as graphql-js locates a field's error. */
function fieldNodesAt(
  document: DocumentNode,
  operationName: string | null | undefined,
  path: readonly (string | number)[],
): FieldNode[] {
  const operation = getOperationAST(document, operationName);
  if (!operation) return [];
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  let sets: SelectionSetNode[] = [operation.selectionSet];
  let nodes: FieldNode[] = [];
  for (const key of path) {
    if (typeof key === "number") continue;
    const found: FieldNode[] = [];
    const visit = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if ((selection.alias?.value ?? selection.name.value) === key) found.push(selection);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
        else {
          const fragment = fragments.get(selection.name.value);
          if (fragment) visit(fragment);
        }
      }
    };
    for (const set of sets) visit(set);
    nodes = found;
    sets = found.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  }
  return nodes;
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
