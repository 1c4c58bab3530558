// The peer address of a request's socket, read once for each request though two read it (health's details,
// exposure.ts, and the access line, client-address.ts).
import type { Server } from "bun";

/** The request whose peer was read last, and its address. */
let lastReceived: Request | undefined;
let lastAddress: string | undefined;

/**
 * The socket's peer address; undefined in process (no server). Bun's requestIP makes a system call and an
 * object each time, a probe's largest cost over HTTP after its Response (bench/results.md, "Health probe,
 * where the time goes"): the last request's answer is kept, as a Request's socket never changes.
 */
export function peerAddress(socket: { server: Server<unknown> | undefined; received: Request }): string | undefined {
  if (socket.server === undefined) return undefined;
  if (lastReceived !== socket.received) {
    lastReceived = socket.received;
    lastAddress = socket.server.requestIP(socket.received)?.address;
  }
  return lastAddress;
}
