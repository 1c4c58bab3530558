// GET and POST /graphql, read top to bottom in serve(): the body is read once within the size limit,
// the token checked once, a repeated query answered from the kept answers, anything else handed to Yoga
// with what was learnt in its server context, and a query that ran cleanly kept for next time. Also
// the SDL for code generators and GraphiQL, when enabled.
import { useGraphQlJit } from "@envelop/graphql-jit";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { Elysia } from "elysia";
import { getOperationAST, GraphQLError, parse, type GraphQLSchema } from "graphql";
import { createSchema, createYoga, useErrorHandler, type Plugin } from "graphql-yoga";
import type { Origin } from "../audit/model.ts";
import type { Hub, Transport } from "../realtime/hub.ts";
import type { Authenticator } from "../auth/authenticator.ts";
import type { Caching } from "../cache/caching.ts";
import type { CategoryService } from "../categories/service.ts";
import type { Config } from "../config.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError } from "../errors.ts";
import { clientAddress } from "../http/client-address.ts";
import { conditionalText } from "../http/etag.ts";
import { IDEMPOTENCY_HEADER, type Idempotency } from "../http/idempotency.ts";
import { readCapped } from "../http/json-body.ts";
import { requestInfo } from "../http/request-context.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import typeDefs from "../../schema/categories.graphql" with { type: "text" };
import { armorPlugins } from "./armor.ts";
import { graphqlCaches } from "./caches.ts";
import type { GraphQLContext } from "./context.ts";
import { fromAppError, isUnexpected, maskError } from "./errors.ts";
import { asksForSchemaOnly } from "./introspection-only.ts";
import { operationLabels, operationMetrics, type OperationLabel } from "./operation-metrics.ts";
import { playgroundResponse } from "./playground.ts";
import { resolvers } from "./resolvers.ts";
import { graphqlWebSocket } from "./websocket.ts";

export const GRAPHQL_PATH = "/graphql";
const JSON_TYPE = "application/json; charset=utf-8";
/** Past this a request's text is not worth keeping an answer under: such queries are rare and would crowd out the rest. */
const MAX_KEY_CHARS = 16 * 1024;
const utf8 = new TextDecoder();

export interface GraphqlDeps {
  config: Config["graphql"];
  metrics: Metrics;
  categories: CategoryService;
  authenticator: Authenticator;
  logger: Logger;
  answers: Caching["answers"];
  maxBodyBytes: number;
  trustProxy: number;
  idempotency: Idempotency;
  hub: Hub;
}

/** What serve() (or the WebSocket server) hands Yoga along with the request. */
export interface ServerContext {
  viewer: UserRecord | null;
  /** The Authorization the viewer was authenticated with: a subscription checks it again while open. */
  authorization: string | null;
  transport: Transport;
  requestId: string | undefined;
  origin: Origin;
  /** A POST's body, already read: Yoga's parser reads it from here, the request's stream being spent. */
  body: Uint8Array<ArrayBuffer> | undefined;
  /** Set once a query has run without errors: its answer may be kept, counted under this label. */
  outcome: { operation?: string };
}

export function graphqlRoutes({
  config,
  metrics,
  categories,
  authenticator,
  logger,
  answers,
  maxBodyBytes,
  trustProxy,
  idempotency,
  hub,
}: GraphqlDeps) {
  const caches = graphqlCaches();
  metrics.reportCaches(() => ({ ...caches.sizes(), responses: answers.size }));
  const label = operationLabels();
  // Widened to a plain GraphQLSchema: Yoga's context typing cannot name ours.
  const schema: GraphQLSchema = createSchema<GraphQLContext>({ typeDefs, resolvers });
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
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
      // Compiles an operation into a function once it has run twice; one-off documents are not worth it.
      useGraphQlJit({}, { enableIf: caches.worthCompiling, cache: caches.compiled }),
      requestErrorsAre400(),
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
          logger.error({ request_id: ctx.requestId, err }, "graphql resolver failed");
        }
      }),
    ],
  });

  async function serve(
    request: Request,
    set: { status?: number | string; headers: Record<string, string | number> },
  ): Promise<Response | string> {
    const info = requestInfo(request);
    // A POST's body, once, within the limit (a GET's query is in its URL).
    const body = request.method === "POST" ? await readCapped(request, maxBodyBytes) : undefined;
    const text = body && utf8.decode(body);

    // Who asks: the token, where the settings want one (asking for the schema alone needs none while
    // introspection is allowed).
    let viewer: UserRecord | null = null;
    const authorization = request.headers.get("authorization");
    const needsToken = config.auth === "required" || (config.auth === "mutations" && authorization);
    if (needsToken && !(config.introspection && asksForSchemaOnly(request, text))) {
      try {
        viewer = (await authenticator.authenticate(authorization)).user;
      } catch (error) {
        if (error instanceof AppError) return graphqlErrorResponse(error);
        throw error;
      }
      if (info) info.userId = viewer.id;
    }

    // A query asked before, with its tables unchanged since, is answered from memory. By GET, the
    // request is its query string.
    const byGet = request.method === "GET";
    const asked = byGet ? queryString(request.url) : text;
    const key = asked === undefined ? null : answerKey(viewer?.id ?? null, request.headers, asked);
    const kept = key === null ? null : await answers.lookup(key);
    if (kept?.hit) {
      metrics.graphqlOperation(kept.hit.operation, "ok");
      // A query by GET (GraphQL over HTTP's cacheable form) carries a strong ETag; If-None-Match gets 304.
      if (byGet) return conditionalText(request, set, kept.hit.body, kept.hit.contentType);
      set.headers["content-type"] = kept.hit.contentType;
      // A string, not a Response: Elysia would copy a Response to add svc's headers, body as a stream.
      return kept.hit.body;
    }

    const outcome: ServerContext["outcome"] = {};
    const address = clientAddress(request, trustProxy);
    const origin = { address, requestId: info?.id ?? null };
    const run = () =>
      yoga.fetch(request, { viewer, authorization, transport: "sse", requestId: info?.id, origin, body, outcome });

    // A mutation under an Idempotency-Key runs once per caller and key; its answer is kept for repeats.
    const mutation = text !== undefined && request.headers.has(IDEMPOTENCY_HEADER) ? mutationOf(text) : null;
    if (mutation) {
      const caller = viewer ? `user:${viewer.id}` : `client:${address}`;
      try {
        return await idempotency.run({ request, set, caller, body: mutation }, async () => {
          const answered = await run();
          set.status = answered.status;
          set.headers["content-type"] = answered.headers.get("content-type") ?? JSON_TYPE;
          return answered.text();
        });
      } catch (error) {
        // The key's own refusals (reused, in flight, malformed), in GraphQL's shape.
        if (error instanceof AppError) return graphqlErrorResponse(error);
        throw error;
      }
    }
    const response = await run();
    // Only a query that ran cleanly is kept, and tagged when asked by GET.
    if (outcome.operation === undefined || response.status !== 200 || !(kept || byGet)) return response;
    const answer = { body: await response.text(), contentType: response.headers.get("content-type") ?? JSON_TYPE };
    kept?.keep({ ...answer, operation: outcome.operation });
    if (byGet) return conditionalText(request, set, answer.body, answer.contentType);
    set.headers["content-type"] = answer.contentType;
    return answer.body;
  }

  const app = new Elysia({ name: "svc/graphql" })
    .get(GRAPHQL_PATH, ({ request, set }) => serve(request, set))
    .post(GRAPHQL_PATH, ({ request, set }) => serve(request, set), { parse: "none" });

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
  const websocket = graphqlWebSocket({
    yoga,
    authenticator,
    auth: config.auth,
    trustProxy,
    logger,
    onSlowReader: () => metrics.subscriptionDropped("slow"),
  });
  return { routes: app, websocket };
}

/** A GET request's query string, "?" included ("" for none): what it asks. */
function queryString(url: string): string {
  const at = url.indexOf("?");
  return at === -1 ? "" : url.slice(at);
}

/**
 * The key an answer is kept under, or null when it cannot be kept: the caller, the headers Yoga's
 * answer depends on (Accept, Content-Type) and the request's text. A text naming `mutation` is never
 * kept (a query that merely mentions the word is executed each time, which is only slower).
 */
export function answerKey(viewerId: string | null, headers: Headers, text: string): string | null {
  if (text.length > MAX_KEY_CHARS || text.includes("mutation")) return null;
  return `${viewerId ?? ""}\n${headers.get("accept") ?? ""}\n${headers.get("content-type") ?? ""}\n${text}`;
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

/** The request's JSON body when it names a mutation to run (the operation it selects); else null. */
function mutationOf(text: string): unknown {
  let request: { query?: unknown; operationName?: unknown };
  try {
    request = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof request?.query !== "string") return null;
  try {
    const name = typeof request.operationName === "string" ? request.operationName : undefined;
    return getOperationAST(parse(request.query), name)?.operation === "mutation" ? request : null;
  } catch {
    // Unparsable: Yoga answers it, and there is nothing to keep.
    return null;
  }
}

/** A 401 in GraphQL's own response shape, so GraphQL clients can read it like any other error. */
function graphqlErrorResponse(error: AppError): Response {
  return new Response(JSON.stringify({ errors: [fromAppError(error).toJSON()] }), {
    status: error.status,
    headers: { ...error.headers, "content-type": JSON_TYPE },
  });
}
