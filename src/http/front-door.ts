// Where every request enters: a request id, the body limit, the headers every answer carries, the
// request metrics and one access line. This is done around Elysia rather than in its lifecycle hooks:
// an onRequest and an onAfterResponse hook cost a health probe a third of its time, and they make
// every compiled route handler asynchronous.
//
// A few GET routes (the health probes) are "direct": answered here without Elysia, and served by
// Bun's own router. The hottest reads (the users page, GraphQL) are "hot": app routes answered the same
// way, Elysia's routing, lifecycle and answer mapping being a large share of what such a read costs
// (docs/performance.md, "What keeps svc near the floor"). The Elysia twins of both stay mounted for the API
// description and any other method.
import type { Serve, Server, WebSocketHandler } from "bun";
import { AppError, internalError, problemResponse, Replayed } from "../errors.ts";
import type { AnswerSet } from "./etag.ts";
import type { Loggers } from "../log.ts";
import type { LineLogger } from "../log-lines.ts";
import type { Metrics } from "../metrics.ts";
import { tooLarge } from "./json-body.ts";
import { answeredId, beginRequest, logIds, type RequestInfo } from "./request-context.ts";
import { routeIndex, type ElysiaRouter, type RouteIndex } from "./route-index.ts";

/**
 * Answers a GET without Elysia. `headers` already holds the request id and the headers every answer
 * carries; the route adds its own (content-type) and builds its Response with them.
 */
export type DirectRoute = (request: Request, headers: Record<string, string>) => Response | Promise<Response>;

/**
 * An app route answered without Elysia, written as an Elysia handler is: a string body with `set`'s
 * status and headers (which start as the headers every answer carries), or a whole Response. What it
 * throws is answered as Elysia's error hook (problem-answers.ts) would: an AppError as problem+json,
 * a Replayed as its answer, anything else as a 500.
 */
export type HotRoute = (request: Request, set: AnswerSet) => string | Response | Promise<string | Response>;

/** Hot routes of one path, by method. */
export type HotRoutes = Partial<Record<"GET" | "POST", HotRoute>>;

export interface Inner {
  router: ElysiaRouter;
  fetch(request: Request): Response | Promise<Response>;
}

export interface FrontDoorOptions {
  app: Inner;
  /** GET routes answered directly, by exact path. */
  direct: Record<string, DirectRoute>;
  /** App routes answered without Elysia, by exact path and method (HEAD is answered by GET's). */
  hot?: Record<string, HotRoutes>;
  /** What each hot route's work runs within, as `app.fetch`'s does (the cache layer's request scope). */
  within?: <T>(work: () => T) => T;
  /** Routes whose 200 answers write no access line (they are still counted in the metrics). */
  quietWhenOk: readonly string[];
  loggers: Loggers;
  metrics: Metrics;
  maxBodyBytes: number;
  /** WebSocket handshakes at `path`: `upgrade` answers a refusal, undefined once upgraded, null for a plain request. */
  websocket?: {
    path: string;
    upgrade(request: Request, server: Server<unknown>): Response | undefined | null | Promise<Response | undefined>;
    handler: WebSocketHandler<never>;
  };
}

type Answer = Response | Promise<Response>;
/** undefined: the request became a WebSocket. */
type Handler = (
  request: Request,
  server: Server<unknown> | undefined,
) => Response | undefined | Promise<Response | undefined>;

export interface FrontDoor {
  /** Answers one request in process, as the server does (tests call this). */
  handle(request: Request): Promise<Response>;
  /** What a server routes by, for serveOptions. */
  handlers: DoorHandlers;
  /** Requests handed to the app so far, probes aside: what tells a busy svc from an idle one. */
  requestsBegun(): number;
  websocket: WebSocketHandler<never> | undefined;
  /** Serves on a socket: the direct routes through Bun's own router, everything else through Elysia. */
  listen(options: ListenOptions): Server<unknown>;
  index: RouteIndex;
}

export interface ListenOptions {
  hostname: string;
  port: number;
  /** SO_REUSEPORT. Always given: with `development: false` Bun turns it on unless told otherwise. */
  reusePort: boolean;
}

/** A declared body past the limit, up to this size (or twice the limit), is read and thrown away before the 413. */
const SWALLOW_MIN_BYTES = 64 * 1024 * 1024;

export function frontDoor({
  app,
  direct,
  hot = {},
  within = (work) => work(),
  quietWhenOk,
  loggers,
  metrics,
  maxBodyBytes,
  websocket,
}: FrontDoorOptions): FrontDoor {
  const quiet = new Set(quietWhenOk);
  const { logger, access } = loggers;
  const debug = logger.isLevelEnabled("debug");
  const index = routeIndex(app.router);
  const inner = app.fetch;

  /** Requests handed to the app (the probes, which allocate next to nothing, are not counted). */
  let begun = 0;
  function begin(
    request: Request,
    server: Server<unknown> | undefined,
    path: string,
    keep = true,
    received = request,
  ): RequestInfo {
    const info = beginRequest(request, server, keep, received);
    if (debug) logger.debug({ ...logIds(info), method: request.method, path }, "request started");
    return info;
  }

  function finish(request: Request, info: RequestInfo, route: string, path: string, response: Response): Response {
    const seconds = (performance.now() - info.startedAt) / 1000;
    metrics.request(request.method, route, response.status, seconds);
    if (quiet.size > 0 && response.status === 200 && quiet.has(route)) return response;
    logCompleted(access, request, info, route, path, response.status, seconds);
    return response;
  }

  /** Elysia turns every failure into problem+json; reaching this is a bug, still answered as one. */
  function failed(info: RequestInfo, error: unknown): Response {
    return answerFailure(error, internalError(error), info, logger);
  }

  function viaApp(received: Request, server: Server<unknown> | undefined): Answer {
    begun++;
    const request = routable(received);
    const path = pathOf(request.url);
    const info = begin(request, server, path, true, received);
    // The route template, not the path: ids in paths would make a label per user.
    const route = index.template(request.method, path) ?? "unmatched";
    const done = (response: Response) => finish(request, info, route, path, stamped(response, answeredId(info)));
    // Refuse an oversized body before anyone reads it; chunked bodies meet the limit in json-body.ts
    // and, on a real socket, Bun's maxRequestBodySize.
    const refused = refuseBody(request);
    if (refused) return refused.then(done);
    let answer: Answer;
    try {
      answer = inner(request);
    } catch (error) {
      return done(failed(info, error));
    }
    return answer instanceof Promise ? answer.then(done, (error: unknown) => done(failed(info, error))) : done(answer);
  }

  // Direct routes never read a body, so the body limit is Bun's maxRequestBodySize alone; and nothing
  // they call looks the request up, so its facts stay local.
  function directly(path: string, route: DirectRoute): Handler {
    const fail = (info: RequestInfo, request: Request, error: unknown) =>
      finish(request, info, path, path, stamped(failed(info, error), answeredId(info)));
    return (request, server) => {
      const info = begin(request, server, path, false);
      let answer: Answer;
      try {
        answer = route(request, baseHeaders(answeredId(info)));
      } catch (error) {
        return fail(info, request, error);
      }
      if (answer instanceof Promise) {
        return answer.then(
          (response) => finish(request, info, path, path, response),
          (error: unknown) => fail(info, request, error),
        );
      }
      return finish(request, info, path, path, answer);
    };
  }

  const swallowMax = bodyReadLimit(maxBodyBytes);

  /**
   * 413 for a declared body past the limit (null for any other). A body up to swallowMax is read and thrown away first (see
   * bodyReadLimit); past it the answer comes at once and the connection closes. (Bun has already said
   * "100 Continue" to a client that asked: it does so before any handler runs, so such a client is
   * sending too.)
   */
  function refuseBody(request: Request): Promise<Response> | null {
    const length = Number(request.headers.get("content-length") ?? 0);
    return length > maxBodyBytes ? swallowThenRefuse(request, length) : null;
  }

  async function swallowThenRefuse(request: Request, length: number): Promise<Response> {
    const response = problemResponse(tooLarge(maxBodyBytes));
    if (length > swallowMax || !request.body) {
      response.headers.set("connection", "close");
      return response;
    }
    const reader = request.body.getReader();
    while (!(await reader.read()).done);
    return response;
  }

  /**
   * A hot route: counted, logged and limited as a request through Elysia is, with its answer made
   * here from `set` as Elysia's would be and its failures answered as Elysia's error hook would.
   */
  function hotly(path: string, route: HotRoute): Handler {
    return (request, server) => {
      begun++;
      const info = begin(request, server, path);
      const done = (response: Response) => finish(request, info, path, path, response);
      const id = answeredId(info);
      const failure = (error: unknown) => done(stamped(hotFailure(info, error), id));
      const refused = refuseBody(request);
      if (refused) return refused.then((response) => done(stamped(response, id)));
      const set: AnswerSet = { headers: baseHeaders(id) };
      const answered = (answer: string | Response) =>
        done(
          typeof answer === "string"
            ? // Header values are strings in every route's `set`; Headers would turn a number into one anyway.
              new Response(answer, {
                status: Number(set.status ?? 200),
                headers: set.headers as Record<string, string>,
              })
            : stamped(answer, id),
        );
      let answer: string | Response | Promise<string | Response>;
      try {
        answer = within(() => route(request, set));
      } catch (error) {
        return failure(error);
      }
      return answer instanceof Promise ? answer.then(answered, failure) : answered(answer);
    };
  }

  /** What problem-answers.ts makes of a failure inside Elysia. */
  const hotFailure = (info: RequestInfo, error: unknown) =>
    answerFailure(error, error instanceof AppError ? error : internalError(error), info, logger);

  /** A WebSocket handshake on the socket path: its refusal, undefined once upgraded, null when the request is none. */
  const upgrading = (request: Request, server: Server<unknown> | undefined) =>
    websocket && server && pathOf(request.url) === websocket.path ? websocket.upgrade(request, server) : null;

  /** By path, then method: the direct routes and the hot ones, each a handler Bun's router can call. */
  const table = new Map<string, Partial<Record<"GET" | "POST", Handler>>>();
  for (const [path, route] of Object.entries(direct)) table.set(path, { GET: directly(path, route) });
  for (const [path, methods] of Object.entries(hot)) {
    const handlers = { ...table.get(path) };
    if (methods.GET) handlers.GET = hotly(path, methods.GET);
    if (methods.POST) handlers.POST = hotly(path, methods.POST);
    // A GET on the socket's path may be its handshake, which Bun's router now hands here instead of to fetch.
    if (handlers.GET && websocket?.path === path) handlers.GET = withUpgrade(handlers.GET);
    table.set(path, handlers);
  }
  const routes = Object.fromEntries(table);

  function withUpgrade(handler: Handler): Handler {
    return (request, server) => {
      const refused = upgrading(request, server);
      // Later (the first handshake waits for the GraphQL engine): a refusal, or undefined once upgraded.
      return refused === null ? handler(request, server) : refused;
    };
  }

  const fetch = !websocket
    ? viaApp
    : (request: Request, server: Server<unknown>) => {
        const refused = upgrading(request, server);
        return refused === null ? viaApp(request, server) : refused;
      };
  return {
    index,
    requestsBegun: () => begun,
    handlers: { routes, fetch },
    websocket: websocket?.handler,
    listen(options) {
      return Bun.serve(
        serveOptions(
          { ...options, maxBodyBytes, logger },
          { routes, fetch },
          websocket?.handler,
        ) as Serve.Options<unknown>,
      );
    },
    async handle(request) {
      // Bun's router answers HEAD with a GET route (without the body); so does this.
      const method = request.method === "HEAD" ? "GET" : request.method;
      const handler = method === "GET" || method === "POST" ? table.get(pathOf(request.url))?.[method] : undefined;
      if (!handler) return viaApp(request, undefined);
      const response = (await handler(request, undefined))!;
      return request.method === "HEAD" ? new Response(null, response) : response;
    },
  };
}

/** Answers a request: a Response, or undefined once it became a WebSocket. */
export type Fetch = (request: Request, server: Server<unknown>) => Response | undefined | Promise<Response | undefined>;

/** What Bun.serve routes by: the direct and hot routes (by exact path, then method) and everything else. */
export interface DoorHandlers {
  routes: Record<string, Partial<Record<"GET" | "POST", Handler>>>;
  fetch: Fetch;
}

export interface ServeSettings extends ListenOptions {
  maxBodyBytes: number;
  /** Where an error that escaped every handler (Bun's own `error` hook) is logged: pino, or svc's own lines before it loads. */
  logger: Pick<LineLogger, "error">;
}

/**
 * A declared body up to this size is read and thrown away before its 413: the client is still sending
 * it, and a server that answers and closes meanwhile leaves it a reset (Node's fetch: EPIPE) instead
 * of the answer. Past it, Bun answers a bare 413 itself.
 */
export function bodyReadLimit(maxBodyBytes: number): number {
  return Math.max(SWALLOW_MIN_BYTES, 2 * maxBodyBytes);
}

/**
 * Bun.serve's options for svc: the socket's settings with the door's handlers. serve.ts starts with
 * handlers of its own (the health probes, and a wait for the app) and reloads the door's once loaded.
 */
export function serveOptions(settings: ServeSettings, handlers: DoorHandlers, websocket?: WebSocketHandler<never>) {
  const { maxBodyBytes, logger, ...listen } = settings;
  return {
    ...listen,
    ...handlers,
    // Bun's own answer past this is a bare 413 and a closed socket: everything up to it reaches
    // refuseBody or a capped reader (json-body.ts, the GraphQL route) instead.
    maxRequestBodySize: bodyReadLimit(maxBodyBytes),
    // Longer than Bun's 10 s, so a load balancer's pooled keep-alive connections are not cut under it.
    idleTimeout: 30,
    // Bun's own answer to an error that escapes is an HTML page, with source in development mode.
    development: false,
    error(error: Error) {
      logger.error({ err: error }, "request failed outside the app");
      return problemResponse(new AppError("internal", "Something went wrong on our side.", { cause: error }));
    },
    ...(websocket && {
      websocket: {
        ...(websocket as WebSocketHandler<unknown>),
        // Bun's pings keep idle proxies from cutting the socket; the client's pongs prove it is there.
        sendPings: true,
        idleTimeout: 120,
      },
    }),
  };
}

/**
 * The answer to a failure a route threw, in Elysia (problem-answers.ts) or out of it: a Replayed's stored
 * answer, or `appError` as problem+json; a 5xx is logged with the request's ids, the client learns no more.
 */
export function answerFailure(
  error: unknown,
  appError: AppError,
  info: RequestInfo | undefined,
  logger: Pick<LineLogger, "error">,
): Response {
  if (error instanceof Replayed) return error.response;
  if (appError.status >= 500) logger.error({ ...logIds(info), err: error }, "request failed");
  return problemResponse(appError);
}

/** The access line of an answered request: by the front door, and by serve.ts's probes before the app has loaded. */
export function logCompleted(
  access: Loggers["access"],
  request: Request,
  info: RequestInfo,
  route: string,
  path: string,
  status: number,
  seconds: number,
): void {
  access.completed({
    requestId: info.id,
    clientRequestId: info.clientId,
    method: request.method,
    route,
    path,
    status,
    durationMs: Math.round(seconds * 100_000) / 100,
    userId: info.userId,
  });
}

/**
 * A WebSocket handler that hands every event to the one `current()` returns when it happens: for a
 * server started before the code that handles its sockets has loaded. No socket opens before then,
 * since upgrades are that code's to make.
 */
export function forwardSocketEvents<T>(current: () => WebSocketHandler<T>): WebSocketHandler<T> {
  return {
    open: (socket) => current().open?.(socket),
    message: (socket, message) => current().message?.(socket, message),
    close: (socket, code, reason) => current().close?.(socket, code, reason),
    drain: (socket) => current().drain?.(socket),
  };
}

export function baseHeaders(requestId: string): Record<string, string> {
  return {
    "x-content-type-options": "nosniff",
    // Every answer is live state or someone's own data: nothing may be cached on the way.
    "cache-control": "no-store",
    "x-request-id": requestId,
  };
}

function stamped(response: Response, requestId: string): Response {
  const headers = response.headers;
  try {
    headers.set("x-content-type-options", "nosniff");
    // Nothing may be cached on the way unless a route says so (the playground's fixed page does).
    if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
    headers.set("x-request-id", requestId);
    return response;
  } catch {
    // An immutable Response (as from fetch): copy it.
    const copy = new Response(response.body, response);
    return stamped(copy, requestId);
  }
}

/**
 * The request, under a stand-in host when its own is too short for Elysia: Elysia looks for the
 * path's "/" from the 12th character on, which skips it behind a host of under 4 characters
 * ("http://api/…", a Kubernetes Service named api), and then routes by the wrong path; without any
 * Host (HTTP/1.0) Bun's URL is the bare path. Routing must not depend on the Host header; nothing svc
 * answers is built from it.
 */
function routable(request: Request): Request {
  const url = request.url;
  const scheme = url.indexOf("//");
  const start = scheme === -1 ? 0 : url.indexOf("/", scheme + 2);
  return start >= ELYSIA_PATH_SEARCH_FROM || start === -1
    ? request
    : new Request(`http://localhost${url.slice(start)}`, request);
}

/** Where Elysia (1.4) starts looking for a URL's path: the length of "https://a.b". */
const ELYSIA_PATH_SEARCH_FROM = 11;

/** The path of an absolute request URL, without the query; cheaper than new URL(). */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = query === -1 ? (hash === -1 ? url.length : hash) : query;
  return url.slice(start, end);
}
