/**
 * A TCP port on 127.0.0.1 that nothing listens on now, for a server that must be told its port
 * before it starts (the healthcheck command reads SVC_PORT). A random pick in a fixed range can
 * land on a port the kernel has just handed out to an outgoing connection; the kernel's own pick
 * cannot, and the window before the server binds it is a few milliseconds.
 */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}
