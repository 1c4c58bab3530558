// The Bun.serve adapter: what must happen before any framework code. A fetch per listener tells the
// request which one it came in on (its socket kept beside it: request-context.ts); a GraphQL WebSocket
// handshake is upgraded here; Elysia's short-Host routing is worked around (`routable`); a refused body is
// read away so that its client gets the 413. Everything else a request gets is Elysia's
// (request-pipeline.ts); serve.ts answers the health probes itself until the app has loaded.
import type { Server, WebSocketHandler } from "bun";
import type { LineLogger } from "../observability/log-lines.ts";
import { arrivedOn, type Listener } from "./request-context.ts";
import { bodyReadLimit, serveOptions } from "./serve-options.ts";
import type { Fetch, ListenOptions, ServerHandlers } from "./serve-options.ts";

export interface OuterHandlerOptions {
  /** Elysia's fetch (within the cache layer's request scope). */
  app: (request: Request) => Response | Promise<Response>;
  maxBodyBytes: number;
  logger: Pick<LineLogger, "error">;
  /** WebSocket handshakes at `path`: `upgrade` answers a refusal, undefined once upgraded, null for a plain request. */
  websocket?: {
    path: string;
    upgrade(request: Request, server: Server<unknown>): Response | undefined | null;
    handler: WebSocketHandler<never>;
  };
}

export interface OuterHandler {
  /** Answers one request in process, as the server does (tests call this, `via` standing for the socket). */
  handle(request: Request, via?: InProcessVia): Promise<Response>;
  /** What a listener answers with (the public one's are `handlers`), and serves on a socket as it. */
  handlersOn(listener: Listener): ServerHandlers;
  handlers: ServerHandlers;
  listen(options: ListenOptions, listener?: Listener): Server<unknown>;
  websocket: WebSocketHandler<never> | undefined;
}

/** What a server would tell a request handed over in process: its listener, and the server for its peer's address. */
export interface InProcessVia {
  listener?: Listener;
  server?: Server<unknown>;
}

export function outerHandler({ app, maxBodyBytes, logger, websocket }: OuterHandlerOptions): OuterHandler {
  const swallowMax = bodyReadLimit(maxBodyBytes);
  function handle(received: Request, server: Server<unknown> | undefined, listener: Listener) {
    const request = routable(received);
    arrivedOn(request, { server, received, listener });
    const length = Number(request.headers.get("content-length") ?? 0);
    return length > maxBodyBytes ? readAway(request, length, app(request)) : app(request);
  }
  // The pipeline refuses a declared body past the limit unread (413); one up to swallowMax is then read away,
  // as the client is still sending it (an answer and a close would leave it a reset: Node's fetch, EPIPE).
  // Past it the connection closes. (Bun has said "100 Continue" before any handler.)
  async function readAway(request: Request, length: number, answer: Response | Promise<Response>) {
    const response = await answer;
    if (response.status !== 413 || request.bodyUsed) return response;
    if (length > swallowMax || !request.body) response.headers.set("connection", "close");
    else for (const reader = request.body.getReader(); !(await reader.read()).done; );
    return response;
  }
  const fetchOn =
    (listener: Listener): Fetch =>
    (request, server) => {
      // A GraphQL WebSocket handshake: its refusal, or undefined once upgraded. Here, not in an Elysia
      // `.ws()` route (whose socket's `raw` graphql-ws's Bun adapter could take): Elysia's fetch takes the
      // Request alone and `.ws()` upgrades through `app.server`, which only Elysia's own `listen()` sets,
      // while svc listens with its own servers (public, operations, serve.ts's before the app loads).
      if (websocket && request.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const refused = new URL(request.url).pathname === websocket.path ? websocket.upgrade(request, server) : null;
        if (refused !== null) return refused;
      }
      return handle(request, server, listener);
    };
  const handlers = { public: { routes: {}, fetch: fetchOn("public") }, ops: { routes: {}, fetch: fetchOn("ops") } };
  const socketHandler = websocket?.handler;
  return {
    handlersOn: (listener) => handlers[listener],
    handlers: handlers.public,
    websocket: socketHandler,
    listen: (options, listener = "public") =>
      Bun.serve(serveOptions({ ...options, maxBodyBytes, logger }, handlers[listener], socketHandler)),
    handle: async (request, via) => handle(request, via?.server, via?.listener ?? "public"),
  };
}

/**
 * The request, under a stand-in host when its own is too short for Elysia: Elysia 1.4 looks for the path's
 * "/" from the 12th character on (`url.indexOf("/", 11)` in its getPath, node_modules/elysia/dist/utils.mjs),
 * which skips it behind a host of under 4 characters ("http://api/…", a Kubernetes Service named api), and
 * then routes by the wrong path (docs/upstream/elysia-short-host.md); without any Host (HTTP/1.0) Bun's URL is
 * the bare path. Routing must not depend on the Host header; nothing svc answers is built from it.
 */
function routable(request: Request): Request {
  const url = request.url;
  const scheme = url.indexOf("//");
  const start = scheme === -1 ? 0 : url.indexOf("/", scheme + 2);
  return start >= "https://a.b".length || start === -1
    ? request
    : // The scheme stays: over svc's own TLS it is what says the client came by HTTPS (cookie-session.ts).
      new Request(`${url.startsWith("https:") ? "https" : "http"}://localhost${url.slice(start)}`, request);
}
