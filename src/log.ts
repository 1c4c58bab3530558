// JSON lines on stdout through pino; secrets are redacted wherever they might be passed in.
import pino, { type Logger } from "pino";
import type { LogLevel } from "./config.ts";

export type { Logger };

export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "svc" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ["password", "*.password", "token", "*.token", "authorization", "*.authorization"], censor: "[redacted]" },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
