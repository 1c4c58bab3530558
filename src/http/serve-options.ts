// Bun.serve's options for svc's sockets: the listener's settings with the adapter's handlers
// (outer-handler.ts), as process/reloadable-listener.ts opens them and serve.ts reloads them once the app has loaded.
import type { Serve, Server, WebSocketHandler } from "bun";
import { AppError, problemResponse } from "../errors/index.ts";
import type { LineLogger } from "../observability/log-lines.ts";

export interface ListenOptions {
  hostname: string;
  port: number;
  /** SO_REUSEPORT. Always given: with `development: false` Bun turns it on unless told otherwise. */
  reusePort: boolean;
}

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

const SWALLOW_MIN_BYTES = 64 * 1024 * 1024;

/** A declared body past the limit, up to this size, is read away before its 413 (outer-handler.ts); past it, Bun answers a bare 413. */
export function bodyReadLimit(maxBodyBytes: number): number {
  return Math.max(SWALLOW_MIN_BYTES, 2 * maxBodyBytes);
}

export function serveOptions(
  settings: ServeSettings,
  handlers: ServerHandlers,
  websocket?: WebSocketHandler<never>,
): Serve.Options<unknown> {
  const { maxBodyBytes, logger, ...listen } = settings;
  return {
    ...listen,
    ...handlers,
    // Bun's own answer past this is a bare 413 and a closed socket: everything up to it reaches the
    // pipeline's refusal or a capped reader (json-body.ts, the GraphQL route) instead.
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
  } as Serve.Options<unknown>;
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
