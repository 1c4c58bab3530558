// Where every request enters, before Elysia: a request id, the body limit, the headers every answer
// carries, the request metrics and one access line. Done in one function around Elysia rather than in
// global lifecycle hooks, which would make every compiled route handler asynchronous
// (docs/performance.md, "What keeps svc near the floor"). Every route is Elysia's to answer; serve.ts
// answers the health probes itself only until the app has loaded. A GraphQL WebSocket handshake is upgraded here, the socket being the server's.
// Each listener has its own fetch, which tells the request which one it came in on; with an operations
// listener, the public one refuses the operations paths here, whatever the method (src/http/exposure.ts).
import type { Serve, Server, WebSocketHandler } from "bun";
import { AppError, internalError, problemResponse } from "../errors.ts";
import type { Listener } from "./exposure.ts";
import type { Loggers } from "../log.ts";
import type { LineLogger } from "../log-lines.ts";
import type { Metrics } from "../metrics.ts";
import { clientAddress } from "./client-address.ts";
import { answerFailure } from "./failure-response.ts";
import { tooLarge } from "./json-body.ts";
import { answeredId, beginRequest, logIds, type RequestInfo } from "./request-context.ts";
import type { RouteTemplates } from "./route-templates.ts";

export interface OuterHandlerOptions {
  /** Elysia's fetch (within the cache layer's request scope). */
  app: (request: Request) => Response | Promise<Response>;
  routes: RouteTemplates;
  /**
   * The health probes' paths: they do not count as the app's requests (what tells a busy svc from an idle
   * one), and with `logProbes` false their 200s write no access line (they are still counted in the metrics).
   */
  probes: readonly string[];
  logProbes: boolean;
  loggers: Loggers;
  metrics: Metrics;
  maxBodyBytes: number;
  /** SVC_TRUST_PROXY: how the access line reads the client's address. */
  trustProxy: number;
  /**
   * With an operations listener: the route templates served on it alone (all GET), to which the public
   * listener answers 404. null (the default): every listener serves every route.
   */
  opsRoutes?: ReadonlySet<string> | null;
  /** Strict-Transport-Security on every answer of the public listener (production over TLS); default false. */
  hsts?: boolean;
  /** WebSocket handshakes at `path`: `upgrade` answers a refusal, undefined once upgraded, null for a plain request. */
  websocket?: {
    path: string;
    upgrade(request: Request, server: Server<unknown>): Response | undefined | null;
    handler: () => WebSocketHandler<never>;
  };
}

export interface OuterHandler {
  /** Answers one request in process, as the server does (tests call this, `via` standing for the socket). */
  handle(request: Request, via?: InProcessVia): Promise<Response>;
  /** What the public listener answers with, for serveOptions. */
  handlers: ServerHandlers;
  /** What a listener answers with: the public one's are `handlers`. */
  handlersOn(listener: Listener): ServerHandlers;
  /** Requests handed to the app so far, probes aside: what tells a busy svc from an idle one. */
  requestsBegun(): number;
  websocket: WebSocketHandler<never> | undefined;
  /** Serves on a socket, as the public listener or the operations one. */
  listen(options: ListenOptions, listener?: Listener): Server<unknown>;
}

/** What a server would tell a request handed over in process: its listener, and the server for its peer's address. */
export interface InProcessVia {
  listener?: Listener;
  server?: Server<unknown>;
}

export interface ListenOptions {
  hostname: string;
  port: number;
  /** SO_REUSEPORT. Always given: with `development: false` Bun turns it on unless told otherwise. */
  reusePort: boolean;
}

/** A declared body past the limit, up to this size (or twice the limit), is read and thrown away before the 413. */
const SWALLOW_MIN_BYTES = 64 * 1024 * 1024;

export function outerHandler({
  app,
  routes,
  probes,
  logProbes,
  loggers,
  metrics,
  maxBodyBytes,
  trustProxy,
  opsRoutes = null,
  hsts = false,
  websocket,
}: OuterHandlerOptions): OuterHandler {
  const probePaths = new Set(probes);
  const { logger, access } = loggers;
  const debug = logger.isLevelEnabled("debug");

  /** Requests handed to the app (the probes, which allocate next to nothing, are not counted). */
  let begun = 0;

  function finish(request: Request, info: RequestInfo, route: string, path: string, response: Response): Response {
    const seconds = (performance.now() - info.startedAt) / 1000;
    metrics.request(request.method, route, response.status, seconds);
    if (!logProbes && response.status === 200 && probePaths.has(route)) return response;
    logCompleted(access, request, info, route, path, response.status, seconds, trustProxy);
    return response;
  }

  /** Elysia turns every failure into problem+json; reaching this is a bug, still answered as one. */
  function failed(info: RequestInfo, error: unknown): Response {
    return answerFailure(error, internalError(error), info, logger);
  }

  /** Whether the public listener must answer 404 to a request for this route (at this path). */
  function opsOnly(route: string, path: string): boolean {
    if (opsRoutes === null) return false;
    if (route !== "unmatched") return opsRoutes.has(route);
    // Another method on an operations path: a 405 naming GET would tell that something lives there.
    return opsRoutes.has(routes.template("GET", path) ?? "unmatched");
  }

  function handle(received: Request, server: Server<unknown> | undefined, listener: Listener): Answer {
    const request = routable(received);
    const path = pathOf(request.url);
    // The route template, not the path: ids in paths would make a label per user.
    let route = routes.template(request.method, path) ?? "unmatched";
    const refused = listener === "public" && opsOnly(route, path);
    if (refused) route = "unmatched";
    if (!probePaths.has(route)) begun++;
    const info = beginRequest(request, server, true, received, listener);
    if (debug) logger.debug({ ...logIds(info), method: request.method, path }, "request started");
    const strictTransport = listener === "public" && hsts;
    const done = (response: Response) =>
      finish(request, info, route, path, stamped(response, answeredId(info), strictTransport));
    if (refused) return done(problemResponse(new AppError("not_found", `Nothing lives at ${path}.`)));
    // Refuse an oversized body before anyone reads it; chunked bodies meet the limit in json-body.ts
    // and, on a real socket, Bun's maxRequestBodySize.
    const tooLarge = refuseBody(request);
    if (tooLarge) return tooLarge.then(done);
    let answer: Answer;
    try {
      answer = app(request);
    } catch (error) {
      return done(failed(info, error));
    }
    return answer instanceof Promise ? answer.then(done, (error: unknown) => done(failed(info, error))) : done(answer);
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

  const fetchOn = (listener: Listener): Fetch =>
    !websocket
      ? (request, server) => handle(request, server, listener)
      : (request, server) => {
          // A GraphQL WebSocket handshake: its refusal, or undefined once upgraded. Here, not in an Elysia
          // `.ws()` route (whose socket's `raw` graphql-ws's Bun adapter could take): Elysia's fetch takes the
          // Request alone and `.ws()` upgrades through `app.server`, which only Elysia's own `listen()` sets,
          // while svc listens with its own servers (public, operations, serve.ts's before the app loads).
          if (pathOf(request.url) === websocket.path && request.headers.get("upgrade")?.toLowerCase() === "websocket") {
            const refused = websocket.upgrade(request, server);
            if (refused !== null) return refused;
          }
          return handle(request, server, listener);
        };
  const socketHandler = websocket && forwardSocketEvents(websocket.handler);
  const handlers: ServerHandlers = { routes: {}, fetch: fetchOn("public") };
  const opsHandlers: ServerHandlers = { routes: {}, fetch: fetchOn("ops") };
  const handlersOn = (listener: Listener) => (listener === "public" ? handlers : opsHandlers);
  return {
    requestsBegun: () => begun,
    handlers,
    handlersOn,
    websocket: socketHandler,
    listen(options, listener = "public") {
      return Bun.serve(
        serveOptions(
          { ...options, maxBodyBytes, logger },
          handlersOn(listener),
          socketHandler,
        ) as Serve.Options<unknown>,
      );
    },
    handle: async (request, via) => (await handle(request, via?.server, via?.listener ?? "public"))!,
  };
}

type Answer = Response | Promise<Response>;

/** Answers a request: a Response, or undefined once it became a WebSocket. */
export type Fetch = (request: Request, server: Server<unknown>) => Response | undefined | Promise<Response | undefined>;

/** What Bun.serve answers with: routes by exact path (serve.ts's probes before the app loads) and everything else. */
export interface ServerHandlers {
  routes: Record<string, { GET: (request: Request, server: Server<unknown>) => Response | Promise<Response> }>;
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
 * Bun.serve's options for svc: the socket's settings with the outer handler's. serve.ts starts with
 * handlers of its own (the health probes, and a wait for the app) and reloads the app's once loaded.
 */
export function serveOptions(settings: ServeSettings, handlers: ServerHandlers, websocket?: WebSocketHandler<never>) {
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

/** The access line of an answered request: by the outer handler, and by serve.ts's probes before the app has loaded. */
export function logCompleted(
  access: Loggers["access"],
  request: Request,
  info: RequestInfo,
  route: string,
  path: string,
  status: number,
  seconds: number,
  trustProxy: number,
): void {
  if (!access.enabled) return;
  const agent = request.headers.get("user-agent");
  access.completed({
    requestId: info.id,
    clientRequestId: info.clientId,
    method: request.method,
    route,
    path,
    status,
    durationMs: Math.round(seconds * 100_000) / 100,
    userId: info.userId,
    clientAddress: clientAddress(request, trustProxy, info),
    // A header of any size must not make a line of any size.
    userAgent: agent === null ? null : agent.slice(0, MAX_USER_AGENT_CHARS),
  });
}

/** Enough for any real browser's or tool's User-Agent. */
const MAX_USER_AGENT_CHARS = 256;

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

/**
 * HSTS for a year, on svc's own host name only: includeSubDomains would bind every other host under the
 * same domain to HTTPS, which svc cannot know of (docs/operations.md, "TLS and a reverse proxy").
 */
export const HSTS = "max-age=31536000";

export function baseHeaders(requestId: string, hsts = false): Record<string, string> {
  const headers: Record<string, string> = {
    "x-content-type-options": "nosniff",
    // Every answer is live state or someone's own data: nothing may be cached on the way.
    "cache-control": "no-store",
    "x-request-id": requestId,
  };
  if (hsts) headers["strict-transport-security"] = HSTS;
  return headers;
}

function stamped(response: Response, requestId: string, hsts: boolean): Response {
  const headers = response.headers;
  try {
    headers.set("x-content-type-options", "nosniff");
    // Nothing may be cached on the way unless a route says so (the playground's fixed page does).
    if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
    headers.set("x-request-id", requestId);
    if (hsts) headers.set("strict-transport-security", HSTS);
    return response;
  } catch {
    // An immutable Response (as from fetch): copy it.
    const copy = new Response(response.body, response);
    return stamped(copy, requestId, hsts);
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
    : // The scheme stays: over svc's own TLS it is what says the client came by HTTPS (cookie-session.ts).
      new Request(`${url.startsWith("https:") ? "https" : "http"}://localhost${url.slice(start)}`, request);
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
