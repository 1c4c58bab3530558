// GET and POST /graphql, read top to bottom from serve(): the body is read once within the size limit,
// the token checked once, a repeated query answered from the kept answers, anything else handed to Yoga
// with what was learnt in its server context, and a query that ran cleanly kept for next time. Also
// the SDL for code generators and GraphiQL, when enabled.
//
// Yoga and everything it runs with are the engine (engine.ts), imported by the first request that needs
// it: an answer kept from before is served without it.
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Hub } from "../realtime/hub.ts";
import type { Authenticator, Caller } from "../auth/authenticator.ts";
import { type Awaitable, attempt, then } from "../awaitable.ts";
import type { AnswerLookup, Caching } from "../cache/caching.ts";
import type { CategoryService } from "../categories/service.ts";
import type { Config } from "../config.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError } from "../errors.ts";
import { clientAddress } from "../http/client-address.ts";
import { assetResponse } from "../http/embedded.ts";
import { type AnswerSet, conditionalText, hasPreconditions, requirePreconditions } from "../http/etag.ts";
import { forwardSocketEvents, type HotRoutes } from "../http/front-door.ts";
import { IDEMPOTENCY_HEADER, type Idempotency } from "../http/idempotency.ts";
import { readCappedText } from "../http/json-body.ts";
import { auditIds, requestInfo } from "../http/request-context.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import typeDefs from "../../schema/categories.graphql" with { type: "text" };
import { graphqlCaches } from "./caches.ts";
import type { ServerContext } from "./context.ts";
import type { Engine } from "./engine.ts";

export const GRAPHQL_PATH = "/graphql";
const JSON_TYPE = "application/json; charset=utf-8";
/** Past this a request's text is not worth keeping an answer under: such queries are rare and would crowd out the rest. */
const MAX_KEY_CHARS = 16 * 1024;
const utf8 = new TextEncoder();

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

export function graphqlRoutes(deps: GraphqlDeps) {
  const { config, metrics, authenticator, logger, answers, maxBodyBytes, trustProxy, idempotency } = deps;
  const caches = graphqlCaches();
  metrics.reportCaches(() => ({ ...caches.sizes(), responses: answers.size }));
  let engine: Engine | undefined;
  let loading: Promise<Engine> | undefined;
  /** The engine, loaded once; every caller of the first load waits for the same one. */
  const loadEngine = (): Engine | Promise<Engine> =>
    engine ??
    (loading ??= import("./engine.ts").then(({ createEngine }) => {
      engine = createEngine({ ...deps, caches, typeDefs, endpoint: GRAPHQL_PATH, jsonType: JSON_TYPE });
      return engine;
    }));

  /** A GraphQL request by GET or POST: at once when its caller is known from memory and its answer is kept. */
  function serve(request: Request, set: AnswerSet): Awaitable<Response | string> {
    if (request.method !== "POST") return asked(request, set, undefined);
    // A POST's body, once, within the limit (a GET's query is in its URL). As text, which is what a kept
    // answer is found by; the bytes Yoga reads are made again from it only when the operation runs.
    return readCappedText(request, maxBodyBytes).then((text) => asked(request, set, text));
  }

  function asked(request: Request, set: AnswerSet, text: string | undefined): Awaitable<Response | string> {
    // Who asks: the token, where the settings want one (asking for the schema alone needs none while
    // introspection is allowed).
    const authorization = request.headers.get("authorization");
    const needsToken = config.auth === "required" || (config.auth === "mutations" && authorization);
    if (!needsToken) return answer(request, set, text, null);
    const schemaOnly = config.introspection && then(loadEngine(), (loaded) => loaded.asksForSchemaOnly(request, text));
    return then(schemaOnly, (only) => {
      if (only) return answer(request, set, text, null);
      const refused = (error: unknown) => {
        if (error instanceof AppError) return then(loadEngine(), (loaded) => loaded.errorResponse(error));
        throw error;
      };
      const known = ({ user }: Caller) => {
        const info = requestInfo(request);
        if (info) info.userId = user.id;
        return answer(request, set, text, user);
      };
      return attempt(() => authenticator.authenticate(authorization), known, refused);
    });
  }

  function answer(
    request: Request,
    set: AnswerSet,
    text: string | undefined,
    viewer: UserRecord | null,
  ): Awaitable<Response | string> {
    // A query asked before, with its tables unchanged since, is answered from memory. By GET, the
    // request is its query string.
    const byGet = request.method === "GET";
    const question = byGet ? queryString(request.url) : text;
    const key = question === undefined ? null : answerKey(viewer?.id ?? null, request.headers, question);
    if (key === null) return run(request, set, text, viewer, null);
    return then(answers.lookup(key), (kept) => {
      if (!kept.hit) return run(request, set, text, viewer, kept);
      metrics.graphqlOperation(kept.hit.operation, "ok");
      // A query by GET (GraphQL over HTTP's cacheable form) carries a strong ETag; If-None-Match gets 304.
      if (byGet) return conditionalText(request, set, kept.hit.body, kept.hit.contentType);
      set.headers["content-type"] = kept.hit.contentType;
      // A string, not a Response: Elysia would copy a Response to add svc's headers, body as a stream.
      return kept.hit.body;
    });
  }

  /** Runs the operation through Yoga; keeps a clean query's answer under `kept`'s key. */
  async function run(
    request: Request,
    set: AnswerSet,
    text: string | undefined,
    viewer: UserRecord | null,
    kept: AnswerLookup | null,
  ): Promise<Response | string> {
    const info = requestInfo(request);
    // The body as Yoga's parser reads it (readBodyParser in engine.ts): the request's own was read as text.
    const body = text === undefined ? undefined : utf8.encode(text);
    const byGet = request.method === "GET";
    const authorization = request.headers.get("authorization");
    const outcome: ServerContext["outcome"] = {};
    const address = clientAddress(request, trustProxy);
    const origin = { address, ...auditIds(info) };
    const { yoga, mutationOf, errorResponse } = await loadEngine();
    const execute = () =>
      yoga.fetch(request, { viewer, authorization, transport: "sse", requestId: info?.id, origin, body, outcome });

    // A mutation is held to its preconditions and, under an Idempotency-Key, runs once per caller and
    // key, its answer kept for repeats.
    const keyed = request.headers.has(IDEMPOTENCY_HEADER);
    const mutation = text !== undefined && (keyed || hasPreconditions(request)) ? mutationOf(text) : null;
    if (mutation) {
      const caller = viewer ? `user:${viewer.id}` : `client:${address}`;
      try {
        // /graphql has no representation to match, so If-Match cannot hold: a category's version goes in ifVersion.
        requirePreconditions(request, null);
        if (!keyed) return await execute();
        const unchanged = (answer: string) => mutation.single && failedAsAWhole(answer);
        return await idempotency.run(
          { request, set, caller, body: mutation.body },
          async () => {
            const answered = await execute();
            set.status = answered.status;
            set.headers["content-type"] = answered.headers.get("content-type") ?? JSON_TYPE;
            return answered.text();
          },
          unchanged,
        );
      } catch (error) {
        // The refusals of the key (reused, in flight, malformed, one too many) and of the preconditions, in GraphQL's shape.
        if (error instanceof AppError) return errorResponse(error);
        throw error;
      }
    }
    const response = await execute();
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
    // GraphiQL, whole from inside the binary (nothing from the internet), gzipped: read on its first
    // request. It opens with an Authorization template in its headers pane and a hint in its editor,
    // and keeps headers (the token) out of localStorage (src/build/assets.ts).
    app.get(`${GRAPHQL_PATH}/playground`, ({ request }) =>
      assetResponse(request, "graphiql.html", "text/html; charset=utf-8"),
    );
  }
  const websocket = {
    /** The engine's socket handler: sockets open only once an upgrade (by the engine) has. */
    handler: forwardSocketEvents(() => engine!.websocket.handler),
    /**
     * Upgrades a GraphQL WebSocket handshake; null when the request is not one. The first handshake
     * waits for the engine to load.
     */
    upgrade(request: Request, server: Server<unknown>): Response | undefined | null | Promise<Response | undefined> {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
      if (engine) return engine.websocket.upgrade(request, server);
      return Promise.resolve(loadEngine()).then((loaded) => loaded.websocket.upgrade(request, server) ?? undefined);
    },
    /** Closes every socket once its operations complete (nothing to do when none ever opened). */
    closeAll: async () => engine?.websocket.closeAll(),
  };
  /** Every GraphQL request by GET or POST is answered by the front door without Elysia (front-door.ts). */
  const hot: Record<string, HotRoutes> = { [GRAPHQL_PATH]: { GET: serve, POST: serve } };
  return { routes: app, websocket, hot };
}

/**
 * Whether a mutation's answer says its root field failed before it changed anything: no data, and no
 * error below a root field (one there means the field's resolver had returned).
 */
function failedAsAWhole(answer: string): boolean {
  try {
    const { data, errors } = JSON.parse(answer) as { data?: unknown; errors?: { path?: unknown[] }[] };
    return data == null && Array.isArray(errors) && errors.every((error) => (error.path?.length ?? 0) <= 1);
  } catch {
    return false;
  }
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
