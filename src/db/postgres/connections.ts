// How many connections Bun's SQL client holds open, for the pool metric. The client tells no count; it
// calls `onconnect` for each connection that opens and `onclose` for each that closes or fails to open,
// without saying which. So a close counts against the open ones unless its error is one that only an
// attempt to open can end with (refused, timed out, turned away at start-up).

/** The codes Bun gives an attempt that never opened (its own, and the server's start-up refusals). */
const NEVER_OPENED = new Set([
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_TLS_NOT_AVAILABLE",
  "ERR_POSTGRES_TLS_UPGRADE_FAILED",
  "ERR_POSTGRES_UNSUPPORTED_AUTHENTICATION_METHOD",
  "ERR_POSTGRES_UNKNOWN_AUTHENTICATION_METHOD",
  "ERR_POSTGRES_INVALID_SERVER_SIGNATURE",
  "ERR_POSTGRES_INVALID_SERVER_KEY",
  "ERR_POSTGRES_AUTHENTICATION_FAILED_PBKDF2",
]);

/**
 * SQLSTATEs a server answers a connection it will not start with: bad credentials (28), no such
 * database (3D000), too many connections (53300), starting up or shutting down (57P03).
 */
const REFUSED_AT_START = /^(28|3D000|53300|57P03)/;

function neverOpened(error: Error | null): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return NEVER_OPENED.has(String(code)) || REFUSED_AT_START.test(String(errno ?? ""));
}

export interface ConnectionCount {
  /** For the client's options. */
  onconnect(): void;
  onclose(error: Error | null): void;
  /** Connections open now. */
  open(): number;
}

export function connectionCount(): ConnectionCount {
  let open = 0;
  return {
    onconnect: () => void open++,
    onclose(error) {
      // Never below zero, whatever an unforeseen error says about an attempt that did not open.
      if (open > 0 && !neverOpened(error)) open--;
    },
    open: () => open,
  };
}
