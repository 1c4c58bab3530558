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
import { type ServeSettings, type ServerHandlers, serveOptions } from "../http/serve-options.ts";
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
 * a port some other process holds is refused first, as it is without TLS (see alone).
 */
export function listen(
  settings: ServeSettings,
  handlers: ServerHandlers,
  websocket: WebSocketHandler<never> | undefined,
  tls: TlsMaterial | null,
  /** For tests: runs between the check that the port is free and the bind, where a race would fall. */
  afterCheck?: () => void,
): Listening {
  let current = handlers;
  const serve = (port: number, material: TlsMaterial | null) =>
    Bun.serve({
      ...serveOptions({ ...settings, port, reusePort: settings.reusePort || material !== null }, current, websocket),
      ...(material && { tls: { cert: material.cert, key: material.key } }),
    } as Serve.Options<unknown>);
  let server =
    tls && !settings.reusePort && settings.port !== 0
      ? alone(settings.hostname, settings.port, () => serve(settings.port, tls), afterCheck)
      : serve(settings.port, tls);
  const retiring = new Set<Server<unknown>>();
  /** Once stopping, no certificate opens a new socket: nothing would ever stop it. */
  let closed = false;
  return {
    get server() {
      return server;
    },
    reload(handlers) {
      current = handlers;
      server.reload(serveOptions(settings, handlers));
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
 * `bind()` (which opens a socket with SO_REUSEPORT) once no other socket holds the port; throws EADDRINUSE
 * otherwise. The check and the bind are one step: between them, a second svc starting at the same moment
 * would find the port free too, and both would then bind with SO_REUSEPORT, sharing it (seen once, #53).
 * So each svc holds a lock for the port across both: an abstract Unix socket (Linux), named for the port,
 * which one process at a time can bind, released when closed or when the process dies, and kept per
 * network namespace as the port itself is. Another svc holding it is mid-check for a few microseconds:
 * this one waits up to 250 ms for it, then takes the port as in use.
 */
function alone<T>(hostname: string, port: number, bind: () => T, afterCheck?: () => void): T {
  const lock = portLock(port);
  try {
    portIsFree(hostname, port);
    afterCheck?.();
    return bind();
  } finally {
    lock?.stop(true);
  }
}

const LOCK_WAIT_MS = 250;

/** The port's lock, or null where abstract sockets cannot be had (not Linux, a sandbox): the check alone, as before. */
function portLock(port: number): { stop(force: boolean): void } | null {
  if (process.platform !== "linux") return null;
  // Per port, whatever the host: 0.0.0.0:8443 and 127.0.0.1:8443 overlap.
  const name = `\0svc-listen-port-${port}`;
  const giveUp = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return Bun.listen({ unix: name, socket: { data() {} } });
    } catch (error) {
      // No Unix sockets here (a sandbox's RestrictAddressFamilies): the check alone, as before.
      if ((error as { code?: unknown }).code !== "EADDRINUSE") return null;
      if (Date.now() >= giveUp) throw error;
      Bun.sleepSync(1);
    }
  }
}

/**
 * Throws EADDRINUSE when another socket holds the port, even one opened with SO_REUSEPORT: Bun.listen
 * opens its socket without it, and so cannot join them.
 */
function portIsFree(hostname: string, port: number): void {
  Bun.listen({ hostname, port, socket: { data() {} } }).stop(true);
}
