// svc's own part of a GraphQL request by GET or POST, in Elysia hooks local to the plugin's two routes.
// Before Yoga: the body read within the size limit, the token checked once, a query asked before
// answered from the cache, a mutation held to its preconditions and Idempotency-Key. After Yoga: a
// stream's events given ids, a mutation's answer kept under its key, a query that ran cleanly kept for
// next time. Yoga does the rest (parsing, validation, execution, its answer's shape).
//
// @elysiajs/graphql-yoga hands Yoga the Request alone, so Yoga's context factory finds what the hook
// learnt by the Request (`askedBy`: the caller, the body as read, the request's facts), and its outcome
// goes back the same way: the one side channel the plugin forces (docs/upstream/graphql-yoga.md).
import { type Awaitable, tryChain, chain } from "../lib/awaitable.ts";
import type { AnswerLookup } from "../cache/caching.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { clientAddress } from "../http/client-address.ts";
import { type AnswerSet, conditionalText, hasPreconditions, requirePreconditions } from "../http/etag.ts";
import { IDEMPOTENCY_HEADER } from "../http/idempotency.ts";
import { isJsonType, notJson, readCappedText } from "../http/json-body.ts";
import { logIds, type RequestInfo } from "../http/request-context.ts";
import { databaseUnavailable } from "../observability/log-dedupe.ts";
import type { GraphQLContext } from "./context.ts";
import { errorResponse, GRAPHQL_JSON_TYPE } from "./errors.ts";
import { withEventIds } from "./event-ids.ts";
import type { TokenVerifier } from "../auth/tokens.ts";
import type { GraphqlDeps } from "./deps.ts";
import { asksForSchemaOnly } from "./introspection-only.ts";
import { fromSet, type HeldAnswer, holdAnswer, mutationOf } from "./mutations.ts";

/** Past this a request's text is not worth caching an answer under: such queries are rare and would crowd out the rest. */
const MAX_KEY_CHARS = 16 * 1024;

/** What is learnt of a request before Yoga runs it. */
export interface Asked {
  /** A POST's body, read (a GET's query is in its URL). */
  text: string | undefined;
  viewer: UserRecord | null;
  /** When the viewer's token expires (ms since the epoch). */
  tokenExpiresAt: number | null;
  /** Where its answer is cached, when it may be. */
  cached: AnswerLookup | null;
  /** Filled in by Yoga once a query has run cleanly. */
  outcome: GraphQLContext["outcome"];
  /** A mutation under an Idempotency-Key, the key claimed: Yoga's answer is kept under it. */
  held?: HeldAnswer;
  /** The request's facts (request-pipeline.ts), for Yoga's context factory. */
  info?: RequestInfo;
}

/** Elysia's context, as much of it as the hooks read. */
interface HookContext {
  request: Request;
  /** The request pipeline's; absent only when the routes are mounted without it. */
  requestInfo: RequestInfo | undefined;
  /** @elysiajs/jwt's, which the routes mount: it checks a token not seen before. */
  accessToken: TokenVerifier;
}

/** From the routes' dependencies, all but what only the resolvers and subscriptions use. */
export function graphqlRequests(deps: Omit<GraphqlDeps, "categories" | "hub">) {
  const { config, metrics, authenticator, answers, maxBodyBytes, trustProxy, idempotency, logger } = deps;
  /** What the hook learnt of each request it let through to Yoga. */
  const learnt = new WeakMap<Request, Asked>();

  /** A refusal or a cached answer, or what Yoga needs to run the request. */
  function ask(request: Request, verifier: TokenVerifier, info?: RequestInfo): Awaitable<Response | Asked> {
    if (request.method !== "POST") return identify(request, undefined, verifier, info);
    // JSON only, as the GraphQL over HTTP spec has it: a form, multipart or text/plain body is what any
    // web page can make a visitor's browser send without a preflight, so accepting one would let pages
    // on other origins run mutations (with SVC_GRAPHQL_AUTH=off, as the visitor).
    if (!isJsonType(request.headers.get("content-type"))) return errorResponse(notJson());
    // As text, which is what a cached answer is found by; Yoga's parser reads a Request made again from it
    // (yoga-config.ts), only when the operation runs: a clone read over a socket costs far more (bench/results.md).
    return chain(readCappedText(request, maxBodyBytes), (text) => identify(request, text, verifier, info));
  }

  /** Who asks: the token, where the settings want one (the schema alone needs none while introspection is on). */
  function identify(
    request: Request,
    text: string | undefined,
    verifier: TokenVerifier,
    info?: RequestInfo,
  ): Awaitable<Response | Asked> {
    const authorization = request.headers.get("authorization");
    const needsToken = config.auth === "required" || (config.auth === "mutations" && authorization);
    if (!needsToken || (config.introspection && asksForSchemaOnly(request, text))) return lookUp(request, text, null);
    return chain(authenticator.authenticate(authorization, verifier), ({ user, token }) => {
      if (info) info.userId = user.id;
      return lookUp(request, text, user, token.exp * 1000);
    });
  }

  /** A query asked before, with its tables unchanged since, is answered from memory. */
  function lookUp(
    request: Request,
    text: string | undefined,
    viewer: UserRecord | null,
    tokenExpiresAt: number | null = null,
  ): Awaitable<Response | Asked> {
    // By GET, the request is its query string.
    const question = request.method === "GET" ? queryString(request.url) : text;
    const key = question === undefined ? null : answerKey(viewer?.id ?? null, request.headers, question);
    const asked = (cached: AnswerLookup | null) => held(request, { text, viewer, tokenExpiresAt, cached, outcome: {} });
    if (key === null) return asked(null);
    return chain(answers.lookup(key), (cached) => {
      if (!cached.hit) return asked(cached);
      metrics.graphqlOperation(cached.hit.operation, "ok");
      return cachedAnswer(request, cached.hit.body, cached.hit.contentType);
    });
  }

  /**
   * A mutation is held to its preconditions and, under an Idempotency-Key, runs once per caller and key:
   * its key claimed here, or the answer kept under it (a repeat) given at once.
   */
  function held(request: Request, asked: Asked): Awaitable<Response | Asked> {
    const keyed = request.headers.has(IDEMPOTENCY_HEADER);
    const mutation = asked.text !== undefined && (keyed || hasPreconditions(request)) ? mutationOf(asked.text) : null;
    if (!mutation) return asked;
    // /graphql has no representation to match, so If-Match cannot hold: a category's version goes in ifVersion.
    requirePreconditions(request, null);
    if (!keyed) return asked;
    const caller = asked.viewer ? `user:${asked.viewer.id}` : `client:${clientAddress(request, trustProxy)}`;
    return chain(holdAnswer(idempotency, { request, caller, mutation }), (hold) => {
      if (hold instanceof Response) return hold;
      asked.held = hold;
      return asked;
    });
  }

  /** After Yoga: event ids on a stream, the answer under its Idempotency-Key, or a clean query's kept. */
  async function answered(request: Request, yoga: Response, asked: Asked): Promise<Response> {
    // A stream of events (SSE) gets each event's cursor as its id.
    const response = request.headers.get("accept")?.includes("text/event-stream") ? withEventIds(yoga) : yoga;
    if (asked.held) return asked.held.answer(response);
    const byGet = request.method === "GET";
    // Only a query that ran cleanly is cached, and tagged when asked by GET.
    const { operation } = asked.outcome;
    if (operation === undefined || response.status !== 200 || !(asked.cached || byGet)) return response;
    const body = await response.text();
    const contentType = response.headers.get("content-type") ?? GRAPHQL_JSON_TYPE;
    asked.cached?.keep({ body, contentType, operation });
    return cachedAnswer(request, body, contentType);
  }

  return {
    /** What the hook learnt of a request Yoga runs, for Yoga's context factory (every route Yoga answers has the hook). */
    askedBy: (request: Request): Asked => learnt.get(request)!,
    /** A cached answer or a refusal; nothing for Yoga to run. */
    beforeHandle: ({ request, accessToken, requestInfo }: HookContext): Awaitable<Response | undefined> =>
      tryChain(
        () => ask(request, accessToken, requestInfo),
        (asked) => {
          if (asked instanceof Response) return asked;
          asked.info = requestInfo;
          learnt.set(request, asked);
        },
        // The refusals of the token, the key (reused, in flight, malformed, one too many) and the preconditions, in GraphQL's shape.
        (error) => {
          if (!(error instanceof AppError)) throw error;
          // The database's unavailability is logged too (the app's logger makes it one line an event: log-dedupe.ts).
          if (databaseUnavailable(error)) logger.error({ ...logIds(requestInfo), err: error }, "request failed");
          return errorResponse(error);
        },
      ),
    afterHandle: ({ request, responseValue }: { request: Request; responseValue: unknown }) => {
      const asked = learnt.get(request);
      // Nothing when the hook answered before Yoga (a cached answer, a refusal).
      if (asked && responseValue instanceof Response) return answered(request, responseValue, asked);
    },
    /** Yoga failed (a bug): a key claimed for its answer is free again. */
    error: ({ request }: { request: Request }) => {
      learnt.get(request)?.held?.fail();
    },
  };
}

/** A cached or cacheable answer: by GET (GraphQL over HTTP's cacheable form) with a strong ETag, and 304 for If-None-Match. */
function cachedAnswer(request: Request, body: string, contentType: string): Response {
  if (request.method !== "GET") return new Response(body, { headers: { "content-type": contentType } });
  const set: AnswerSet = { headers: {} };
  return fromSet(conditionalText(request, set, body, contentType), set);
}

/** A GET request's query string, "?" included ("" for none): what it asks. */
function queryString(url: string): string {
  const at = url.indexOf("?");
  return at === -1 ? "" : url.slice(at);
}

/**
 * The key an answer is cached under, or null when it cannot be: the caller, the headers Yoga's answer
 * depends on (Accept, Content-Type) and the request's text. A text naming `mutation` is never cached (a
 * query that merely mentions the word is executed each time, which is only slower).
 */
export function answerKey(viewerId: string | null, headers: Headers, text: string): string | null {
  if (text.length > MAX_KEY_CHARS || text.includes("mutation")) return null;
  return `${viewerId ?? ""}\n${headers.get("accept") ?? ""}\n${headers.get("content-type") ?? ""}\n${text}`;
}
