// Who may see what svc says about itself. With SVC_OPS_ADDRESS, the operations paths (metrics, the
// console, the API docs, the playground) are the operations listener's alone: the public listener answers
// 404 there (request-pipeline.ts), and only it hears health's details. Without it, in production, /svc/metrics
// is served with SVC_METRICS_TOKEN or else to loopback clients only; and /svc/health says version,
// environment, database and uptime only to loopback clients (outside production, to anyone).
import type { Config } from "../config/index.ts";
import { AppError } from "../errors/index.ts";
import { peerAddress } from "./peer-address.ts";
import type { Listener, Socket } from "./request-context.ts";

/** Where a request came from, as the server that accepted it knows it. */
export interface Via {
  listener: Listener;
  /** The socket's peer address; undefined in process (app.handle without a server). */
  peer: string | undefined;
  /** Whether a proxy forwarded it (X-Forwarded-For, Forwarded or X-Real-IP): then the peer is the proxy. */
  proxied: boolean;
}

export interface Exposure {
  /** Whether /svc/health may say version, environment, database kind and uptime. */
  healthDetails(via: Via): boolean;
  /** Why /svc/metrics is refused to this caller; null: serve it. */
  metricsRefusal(via: Via, authorization: string | null): AppError | null;
}

const METRICS_PATH = "/svc/metrics";
const CHALLENGE = 'Bearer realm="svc metrics"';

export function exposure(config: Pick<Config, "env" | "metricsToken" | "opsAddress">): Exposure {
  const production = config.env === "production";
  const token = config.metricsToken === null ? null : digest(config.metricsToken);
  // With an operations listener, it alone is inside: on the public one, a proxy in TCP mode (haproxy,
  // stunnel, ssh -R) adds no forwarding header, and its strangers would look like the box itself.
  const inside = (via: Via) =>
    via.listener === "ops" || (config.opsAddress === null && isLoopback(via.peer) && !via.proxied);
  return {
    healthDetails: (via) => !production || inside(via),
    metricsRefusal(via, authorization) {
      if (token) return bearerMatches(authorization, token) ? null : refusedToken(authorization !== null);
      // The same answer as for a path that does not exist: nothing tells a stranger metrics are there.
      if (production && !inside(via)) return new AppError("not_found", `Nothing lives at ${METRICS_PATH}.`);
      return null;
    },
  };
}

/** Where a request came from: its listener, its socket's peer, and whether a trusted proxy forwarded it. */
export function viaOf(socket: Socket): Via {
  const { headers } = socket.received;
  return {
    listener: socket.listener,
    peer: peerAddress(socket),
    // A proxy on the box connects from loopback for every client it forwards, and says so in one of these
    // headers, which a client behind it cannot take away. Whether svc trusts the proxy (SVC_TRUST_PROXY)
    // does not matter here: a forwarded request is never the box's own, so a proxy left out of the setting
    // by mistake hands strangers nothing. A client that sends one itself only refuses itself.
    proxied: headers.has("x-forwarded-for") || headers.has("forwarded") || headers.has("x-real-ip"),
  };
}

/** 127.0.0.0/8, ::1, and IPv4 loopback as a dual-stack socket reports it (::ffff:127.x.x.x). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.") || address === "::1";
}

/** Tokens are compared as SHA-256 digests: always 32 bytes, whatever the length of what was sent. */
function digest(text: string): Uint8Array {
  return Bun.SHA256.hash(text) as Uint8Array;
}

function bearerMatches(authorization: string | null, expected: Uint8Array): boolean {
  if (authorization === null || !/^Bearer /i.test(authorization)) return false;
  const given = digest(authorization.slice(7).trim());
  // Every byte, with no early exit: how long the comparison takes says nothing of where they differ.
  let difference = 0;
  for (let i = 0; i < expected.length; i++) difference |= given[i]! ^ expected[i]!;
  return difference === 0;
}

function refusedToken(sent: boolean): AppError {
  return new AppError("unauthorized", "/svc/metrics needs the Bearer token SVC_METRICS_TOKEN holds.", {
    headers: { "www-authenticate": sent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE },
  });
}
