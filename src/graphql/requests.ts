// svc's own part of a GraphQL request by GET or POST: the body read once within the size limit, the
// token checked once, a query asked before answered from the cache, a mutation held to its
// preconditions and Idempotency-Key, and a query that ran cleanly cached for next time. Yoga does the
// rest (parsing, validation, execution, its answer's shape).
//
// Two hooks share it. An Elysia onBeforeHandle, local to the GraphQL routes, answers a cached query (or
// a refusal) before Yoga is reached at all: through yoga.fetch a cached answer cost about half as much
// again (bench/results.md, #40). What it learnt of any other request is handed to the Yoga plugin's
// onRequest, which runs the operation.
import { withEventIds } from "./event-ids.ts";
import type { Plugin } from "graphql-yoga";
import { type Awaitable, attempt, then } from "../awaitable.ts";
import type { AnswerLookup } from "../cache/caching.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError, internalError } from "../errors.ts";
import { clientAddress } from "../http/client-address.ts";
import { type AnswerSet, conditionalText, hasPreconditions, requirePreconditions } from "../http/etag.ts";
import { IDEMPOTENCY_HEADER } from "../http/idempotency.ts";
import { isJsonType, notJson, readCappedText } from "../http/json-body.ts";
import { answerFailure } from "../http/failure-response.ts";
import { auditIds, logIds, requestInfo } from "../http/request-context.ts";
import { databaseUnavailable } from "../log-dedupe.ts";
import type { ServerContext } from "./context.ts";
import type { GraphqlDeps } from "./index.ts";
import { errorResponse, JSON_TYPE } from "./errors.ts";
import { asksForSchemaOnly } from "./introspection-only.ts";
import { failedAsAWhole, mutationOf } from "./mutations.ts";

/** Past this a request's text is not worth caching an answer under: such queries are rare and would crowd out the rest. */
const MAX_KEY_CHARS = 16 * 1024;
const utf8 = new TextEncoder();

/** The routes' own dependencies, but for what only the resolvers and subscriptions use. */
export type RequestPluginDeps = Omit<GraphqlDeps, "categories" | "hub">;

/** What is learnt of a request before Yoga runs it. */
interface Asked {
  /** A POST's body as text (a GET's query is in its URL). */
  text: string | undefined;
  viewer: UserRecord | null;
  /** When the viewer's token expires (ms since the epoch). */
  tokenExpiresAt?: number;
  /** Where its answer is cached, when it may be. */
  cached: AnswerLookup | null;
}

type YogaHandler = (request: Request, context: ServerContext) => Awaitable<Response>;

export interface GraphqlRequests {
  /** Elysia's onBeforeHandle for GET and POST /graphql: a cached answer or a refusal; nothing for Yoga to run. */
  beforeYoga(context: { request: Request }): Awaitable<Response | undefined>;
  /** The Yoga plugin that runs what beforeYoga let through. */
  plugin: Plugin<{}, ServerContext>;
}

export function graphqlRequests(deps: RequestPluginDeps): GraphqlRequests {
  const { config, metrics, authenticator, logger, answers, maxBodyBytes, trustProxy, idempotency } = deps;
  /** What beforeYoga learnt of a request it let through, for the Yoga plugin (the body is read by then). */
  const learnt = new WeakMap<Request, Asked>();

  /** A refusal or a cached answer, or what Yoga needs to run the request. */
  function ask(request: Request): Awaitable<Response | Asked> {
    if (request.method !== "POST") return identify(request, undefined);
    // JSON only, as the GraphQL over HTTP spec has it: a form, multipart or text/plain body is what any
    // web page can make a visitor's browser send without a preflight, so accepting one would let pages
    // on other origins run mutations (with SVC_GRAPHQL_AUTH=off, as the visitor).
    if (!isJsonType(request.headers.get("content-type"))) return errorResponse(notJson());
    // As text, which is what a cached answer is found by; the bytes Yoga reads are made again from it
    // only when the operation runs.
    return then(readCappedText(request, maxBodyBytes), (text) => identify(request, text));
  }

  /** Who asks: the token, where the settings want one (the schema alone needs none while introspection is on). */
  function identify(request: Request, text: string | undefined): Awaitable<Response | Asked> {
    const authorization = request.headers.get("authorization");
    const needsToken = config.auth === "required" || (config.auth === "mutations" && authorization);
    if (!needsToken || (config.introspection && asksForSchemaOnly(request, text))) return lookUp(request, text, null);
    const refused = (error: unknown) => {
      if (error instanceof AppError) return answered(request, error);
      throw error;
    };
    return attempt(
      () => authenticator.authenticate(authorization),
      ({ user, token }) => {
        const info = requestInfo(request);
        if (info) info.userId = user.id;
        return lookUp(request, text, user, token.exp * 1000);
      },
      refused,
    );
  }

  /** A query asked before, with its tables unchanged since, is answered from memory. */
  function lookUp(
    request: Request,
    text: string | undefined,
    viewer: UserRecord | null,
    tokenExpiresAt?: number,
  ): Awaitable<Response | Asked> {
    const byGet = request.method === "GET";
    // By GET, the request is its query string.
    const question = byGet ? queryString(request.url) : text;
    const key = question === undefined ? null : answerKey(viewer?.id ?? null, request.headers, question);
    if (key === null) return { text, viewer, tokenExpiresAt, cached: null };
    return then(answers.lookup(key), (cached) => {
      if (!cached.hit) return { text, viewer, tokenExpiresAt, cached };
      metrics.graphqlOperation(cached.hit.operation, "ok");
      return cachedAnswer(request, cached.hit.body, cached.hit.contentType);
    });
  }

  /** Runs the operation through Yoga; caches a clean query's answer where `asked.cached` says. */
  async function run(request: Request, context: ServerContext, yoga: YogaHandler, asked: Asked): Promise<Response> {
    const { text, viewer, tokenExpiresAt, cached } = asked;
    const info = requestInfo(request);
    const address = clientAddress(request, trustProxy);
    Object.assign(context, {
      viewer,
      authorization: request.headers.get("authorization"),
      tokenExpiresAt: tokenExpiresAt ?? null,
      transport: "sse",
      requestId: info?.id,
      origin: { address, ...auditIds(info) },
      // The body as Yoga's parser reads it (readBodyParser): the request's own was read as text.
      body: text === undefined ? undefined : utf8.encode(text),
      outcome: {},
    } satisfies ServerContext);
    // A stream of events (SSE) gets each event's cursor as its id.
    const streams = request.headers.get("accept")?.includes("text/event-stream") ?? false;
    const execute = streams ? async () => withEventIds(await yoga(request, context)) : () => yoga(request, context);

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
        const set: AnswerSet = { headers: {} };
        const answer = await idempotency.run(
          { request, set, caller, body: mutation.body },
          async () => {
            const answered = await execute();
            set.status = answered.status;
            set.headers["content-type"] = answered.headers.get("content-type") ?? JSON_TYPE;
            return answered.text();
          },
          (answer: string) => mutation.single && failedAsAWhole(answer),
        );
        return typeof answer === "string" ? fromSet(answer, set) : answer;
      } catch (error) {
        // The refusals of the key (reused, in flight, malformed, one too many) and of the preconditions, in GraphQL's shape.
        if (error instanceof AppError) return answered(request, error);
        throw error;
      }
    }
    const response = await execute();
    const byGet = request.method === "GET";
    // Only a query that ran cleanly is cached, and tagged when asked by GET.
    if (context.outcome.operation === undefined || response.status !== 200 || !(cached || byGet)) return response;
    const body = await response.text();
    const contentType = response.headers.get("content-type") ?? JSON_TYPE;
    cached?.keep({ body, contentType, operation: context.outcome.operation });
    return cachedAnswer(request, body, contentType);
  }

  /** An AppError in GraphQL's shape; the database's unavailability is logged too (one line an event: log-dedupe.ts). */
  const answered = (request: Request, error: AppError) => {
    if (databaseUnavailable(error)) logger.error({ ...logIds(requestInfo(request)), err: error }, "request failed");
    return errorResponse(error);
  };

  /** What Elysia's error hook would answer (problem-answers.ts): a failure here is not GraphQL's to shape. */
  const failed = (request: Request) => (error: unknown) =>
    answerFailure(error, error instanceof AppError ? error : internalError(error), requestInfo(request), logger);

  return {
    beforeYoga({ request }) {
      return then(ask(request), (asked) => {
        if (asked instanceof Response) return asked;
        learnt.set(request, asked);
      });
    },
    plugin: {
      onRequest({ request, requestHandler, setRequestHandler, endResponse }) {
        return attempt(
          () => learnt.get(request) ?? ask(request),
          (asked) => {
            if (asked instanceof Response) return endResponse(asked);
            setRequestHandler((request, context) =>
              run(request, context as ServerContext, requestHandler as YogaHandler, asked).catch(failed(request)),
            );
          },
          (error) => endResponse(failed(request)(error)),
        );
      },
    },
  };
}

/** A cached or cacheable answer: by GET (GraphQL over HTTP's cacheable form) with a strong ETag, and 304 for If-None-Match. */
function cachedAnswer(request: Request, body: string, contentType: string): Response {
  if (request.method !== "GET") return new Response(body, { headers: { "content-type": contentType } });
  const set: AnswerSet = { headers: {} };
  return fromSet(conditionalText(request, set, body, contentType), set);
}

function fromSet(body: string, set: AnswerSet): Response {
  const status = Number(set.status ?? 200);
  // Header values are strings in every `set` here; Headers would turn a number into one anyway.
  return new Response(status === 304 ? null : body, { status, headers: set.headers as Record<string, string> });
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
