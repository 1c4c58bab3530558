// JSON lines on stdout. General logging goes through pino, which redacts secrets wherever they might
// be passed in. The per-request access line has a fixed set of fields, none of them secret, and is
// written by a fixed serializer in pino's own line format (log-lines.ts), about a tenth of what pino
// costs per line (bun run bench:micro; bench/results.md).
import "./compat/tracing-channel.ts";
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config.ts";
import { type AccessLog, accessLog, processLines } from "./log-lines.ts";
import { safeError } from "./safe-errors.ts";

export type { Logger };
export type { AccessEntry, AccessLog } from "./log-lines.ts";

export interface Loggers {
  logger: Logger;
  /** One line per answered request: request id, method, route, path, status, duration, user id. */
  access: AccessLog;
  /** Writes out whatever is buffered; call before exiting. */
  flush(): void;
}

/** Both write to `destination`, or else to stdout through the process's one batch (processLines). */
export function createLoggers(level: LogLevel, destination?: DestinationStream): Loggers {
  // Errors are logged through safeError: never the values a failed statement carried.
  const options = {
    level,
    base: { service: "svc" },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: safeError },
  };
  const redact = {
    paths: ["password", "*.password", "token", "*.token", "authorization", "*.authorization"],
    censor: "[redacted]",
  };
  if (destination) {
    const logger = pino({ ...options, redact }, destination);
    return { logger, access: accessLog(level, (line) => void destination.write(line)), flush: () => {} };
  }
  const out = processLines();
  const logger = pino({ ...options, redact }, { write: out.now });
  return { logger, access: accessLog(level, out.hold), flush: out.flush };
}
