// svc serve's sockets: the public listener (HTTPS with SVC_TLS_CERT and SVC_TLS_KEY) and, with
// SVC_OPS_ADDRESS, the operations listener (plain HTTP, for loopback or a private network). Until the
// app has loaded each answers the health probes itself and hands anything else to the app once it is
// there (serve.ts). A socket that cannot be opened stops start-up with one line.
import type { WebSocketHandler } from "bun";
import type { Config, ListenAddress } from "../config/index.ts";
import { exposure, viaOf } from "../http/exposure.ts";
import { listen, type Listening } from "./reloadable-listener.ts";
import { logCompleted, stampHeaders } from "../http/access-line.ts";
import { beginRequest, type Listener, type RequestInfo } from "../http/request-context.ts";
import type { ServeSettings, ServerHandlers } from "../http/serve-options.ts";
import type { TlsMaterial } from "./tls.ts";
import type { Probes } from "../health/probes.ts";
import type { AccessLog, LineLogger } from "../observability/log-lines.ts";

export interface Listeners {
  public: Listening;
  ops: Listening | null;
  /** Each listener's handlers from now on: the app's, once it has loaded. */
  reload(handlers: (listener: Listener) => ServerHandlers): void;
  /** The URLs they listen at, for the "svc listening" line. */
  addresses(): { address: string; ops_address?: string };
  stop(force?: boolean): Promise<void>;
}

export interface ListenersDeps {
  config: Config;
  tls: TlsMaterial | null;
  probes: Probes;
  access: AccessLog;
  logger: LineLogger;
  /** Answers a request the probes do not, on the listener it came in on (by loading the app first). */
  fetch: (listener: Listener) => ServerHandlers["fetch"];
  websocket: WebSocketHandler<never>;
}

/** Opens the sockets, or says in one line why one cannot be opened (after `onFailure`) and exits 1. */
export async function openListeners(deps: ListenersDeps, onFailure: () => Promise<void>): Promise<Listeners> {
  const { config, tls, logger, websocket } = deps;
  const hsts = config.env === "production" && tls !== null;
  const handlersFor = (listener: Listener): ServerHandlers => ({
    // With CORS on, the probes' headers come from the app.
    routes: config.corsOrigins.length === 0 ? earlyProbes(deps, listener, listener === "public" && hsts) : {},
    fetch: deps.fetch(listener),
  });
  const settings = (address: ListenAddress): ServeSettings => ({
    hostname: address.host,
    port: address.port,
    reusePort: config.reusePort,
    maxBodyBytes: config.maxBodyBytes,
    logger,
  });
  const open = async (address: ListenAddress, variables: Names, listener: Listener, material: TlsMaterial | null) => {
    try {
      return listen(settings(address), handlersFor(listener), websocket, material);
    } catch (error) {
      await onFailure();
      console.error(`svc: cannot listen on ${address.host}:${address.port}: ${listenProblem(error, variables)}`);
      process.exit(1);
    }
  };
  const publicListener = await open({ host: config.host, port: config.port }, PUBLIC, "public", tls);
  const ops = config.opsAddress ? await open(config.opsAddress, OPS, "ops", null) : null;
  const url = (listening: Listening, scheme: string) => {
    const { hostname, port } = listening.server;
    return `${scheme}://${hostname!.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  };
  return {
    public: publicListener,
    ops,
    reload(handlers) {
      publicListener.reload(handlers("public"));
      ops?.reload(handlers("ops"));
    },
    addresses: () => ({
      address: url(publicListener, tls ? "https" : "http"),
      ...(ops && { ops_address: url(ops, "http") }),
    }),
    async stop(force) {
      await Promise.all([publicListener.stop(force), ops?.stop(force)]);
    },
  };
}

/**
 * The probes before the app has loaded, with the headers every answer carries. They write the access
 * line the app's outer handler would, but are not in the metrics: those are the app's.
 */
function earlyProbes(
  { config, probes, access }: ListenersDeps,
  listener: Listener,
  hsts: boolean,
): ServerHandlers["routes"] {
  const exposed = exposure(config);
  return Object.fromEntries(
    Object.entries(probes).map(([path, probe]) => {
      const logged = (request: Request, info: RequestInfo, response: Response) => {
        if (config.logProbes || response.status !== 200)
          logCompleted(
            access,
            request,
            info,
            path,
            path,
            response.status,
            (performance.now() - info.startedAt) / 1000,
            config.trustProxy,
          );
        return response;
      };
      const answer: ServerHandlers["routes"][string]["GET"] = (request, server) => {
        const info = beginRequest(request, { server, received: request, listener });
        const details = exposed.healthDetails(viaOf(info));
        const headers: Record<string, string> = {};
        stampHeaders(headers, info, hsts);
        const response = probe(request, headers, details);
        return response instanceof Promise
          ? response.then((r) => logged(request, info, r))
          : logged(request, info, response);
      };
      return [path, { GET: answer }];
    }),
  );
}

/** The variables that set a listener's address, for its failure's line. */
interface Names {
  host: string;
  port: string;
}
const PUBLIC: Names = { host: "SVC_HOST", port: "SVC_PORT" };
const OPS: Names = { host: "SVC_OPS_ADDRESS's host", port: "SVC_OPS_ADDRESS's port" };

/** Why a socket could not be opened, in one line an operator can act on. */
function listenProblem(error: unknown, names: Names): string {
  const code = (error as { code?: unknown }).code;
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  switch (code) {
    case "EADDRINUSE":
      return `the port is in use (another svc?); stop it, choose another ${names.port}, or set SVC_REUSE_PORT=true to share the port on purpose`;
    // Bun reports a host it cannot resolve (or an impossible address such as 256.1.1.1) as ENOENT,
    // or as EINVAL where the resolver hands back something listen() cannot use (seen on some machines).
    case "ENOENT":
    case "EINVAL":
      return `${names.host} is not an address or a host name this machine can resolve (0.0.0.0 listens on every address)`;
    case "EADDRNOTAVAIL":
      return `${names.host} is not an address of this machine (0.0.0.0 listens on every address)`;
    case "EACCES":
      return `permission denied: ports below 1024 need privileges (or CAP_NET_BIND_SERVICE); choose another ${names.port}`;
    default:
      return message;
  }
}
