// One of svc's sockets: the public listener (HTTP, or HTTPS with SVC_TLS_CERT) or the operations listener
// (plain HTTP). Its handlers change once the app has loaded; an HTTPS listener's certificate changes at
// SIGHUP.
//
// Bun (1.4.5) cannot change a listening server's certificate: server.reload() takes only the handlers
// and ignores `tls` (oven-sh/bun#43815). So a new certificate gets a new server on the same port, the
// sockets sharing it through SO_REUSEPORT, and the old server then stops listening gracefully: what it
// is answering (requests in flight, event streams, WebSockets) finishes on the old certificate, and new
// connections get the new one. Bun's graceful stop also closes the old server's idle keep-alive
// connections, as an idle timeout would: a client's next request opens a new one
// (docs/operations.md, "Certificate rotation").
import type { Serve, Server, WebSocketHandler } from "bun";
import { type ServeSettings, type ServerHandlers, serveOptions } from "./outer-handler.ts";
import type { TlsMaterial } from "./tls.ts";

export interface Listening {
  /** The server accepting connections now (its port is the one svc listens on). */
  readonly server: Server<unknown>;
  /** Answers with these handlers from now on. */
  reload(handlers: ServerHandlers): void;
  /**
   * Listens with this certificate from now on, on the same port; the previous server stops accepting and
   * finishes what it is answering. Throws, leaving the certificate in use as it was, when the new socket
   * cannot be opened.
   */
  rotate(tls: TlsMaterial): void;
  /** Stops accepting; resolves once every server's requests are answered, or at once with `force`. */
  stop(force?: boolean): Promise<void>;
}

/**
 * Opens the socket (Bun.serve's errors, such as EADDRINUSE, are thrown). With TLS it is opened with
 * SO_REUSEPORT, for the next certificate's server to share; unless `settings.reusePort` asks for sharing,
 * a port some other process holds is refused first, as it is without TLS (see portIsFree).
 */
export function listen(
  settings: ServeSettings,
  handlers: ServerHandlers,
  websocket: WebSocketHandler<never> | undefined,
  tls: TlsMaterial | null,
): Listening {
  let current = handlers;
  const serve = (port: number, material: TlsMaterial | null) =>
    Bun.serve({
      ...serveOptions({ ...settings, port, reusePort: settings.reusePort || material !== null }, current, websocket),
      ...(material && { tls: { cert: material.cert, key: material.key } }),
    } as Serve.Options<unknown>);
  if (tls && !settings.reusePort && settings.port !== 0) portIsFree(settings.hostname, settings.port);
  let server = serve(settings.port, tls);
  const retiring = new Set<Server<unknown>>();
  /** Once stopping, no certificate opens a new socket: nothing would ever stop it. */
  let closed = false;
  return {
    get server() {
      return server;
    },
    reload(handlers) {
      current = handlers;
      server.reload(serveOptions(settings, handlers) as Serve.Options<unknown>);
    },
    rotate(material) {
      if (closed) return;
      const next = serve(server.port!, material);
      const previous = server;
      server = next;
      retiring.add(previous);
      void previous.stop().then(() => retiring.delete(previous));
    },
    async stop(force = false) {
      closed = true;
      await Promise.all([server, ...retiring].map((each) => each.stop(force)));
    },
  };
}

/**
 * Throws EADDRINUSE when another socket holds the port, even one opened with SO_REUSEPORT: Bun.listen
 * opens its socket without it, and so cannot join them. svc's own, with SO_REUSEPORT, opens at once after.
 */
function portIsFree(hostname: string, port: number): void {
  Bun.listen({ hostname, port, socket: { data() {} } }).stop(true);
}
