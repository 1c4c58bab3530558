// JSON lines on stdout. General logging goes through pino, which redacts secrets wherever they might
// be passed in. The per-request access line has a fixed set of fields, none of them secret, and is
// written by a fixed serializer in pino's own line format (log-lines.ts), about a tenth of what pino
// costs per line (bun run bench:micro; bench/results.md).
import type { DestinationStream, Logger as Pino } from "pino";
import type { LogLevel } from "../config/index.ts";
import { type AccessLog, accessLog, LEVELS, type LineLogger, processLines } from "./log-lines.ts";
import { safeError } from "../errors/safe-errors.ts";

/** What svc's code logs through: pino's methods for the levels it uses. */
export interface Logger extends LineLogger {
  isLevelEnabled(level: "debug" | "info" | "warn" | "error"): boolean;
}
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
  if (destination) {
    return {
      logger: onFirstLine(level, () => makePino(level, destination)),
      access: accessLog(level, (line) => void destination.write(line)),
      flush: () => {},
    };
  }
  const out = processLines();
  return {
    logger: onFirstLine(level, () => makePino(level, { write: out.now })),
    access: accessLog(level, out.hold),
    flush: out.flush,
  };
}

function makePino(level: LogLevel, destination: DestinationStream): Pino {
  // Loaded with the first line at an enabled level, which a service at work seldom writes (at the default
  // level, only warnings and errors): less RSS after a load without one (docs/performance.md, "Footprint").
  require("../compat/tracing-channel.ts");
  const pino: typeof import("pino").default = require("pino");
  // Errors are logged through safeError: never the values a failed statement carried.
  return pino(
    {
      level,
      base: { service: "svc" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"warn", not pino's 40: what an operator's alert rule or jq filter names.
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: safeError },
      redact: {
        paths: ["password", "*.password", "token", "*.token", "authorization", "*.authorization"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

/** A logger that makes pino (`make`) on the first line at or above `level`, and writes every line through it. */
function onFirstLine(level: LogLevel, make: () => Pino): Logger {
  const threshold = LEVELS[level];
  let pino: Pino | undefined;
  const at =
    (n: number, name: "debug" | "info" | "warn" | "error") => (fieldsOrMessage: object | string, message?: string) => {
      if (n < threshold) return;
      pino ??= make();
      if (typeof fieldsOrMessage === "string") pino[name](fieldsOrMessage);
      else pino[name](fieldsOrMessage, message);
    };
  return {
    debug: at(LEVELS.debug, "debug"),
    info: at(LEVELS.info, "info"),
    warn: at(LEVELS.warn, "warn"),
    error: at(LEVELS.error, "error"),
    isLevelEnabled: (name) => LEVELS[name] >= threshold,
  };
}
