// JSON lines on stdout through pino. General logging redacts secrets wherever they might be passed
// in; the per-request access line has a fixed set of fields, none of them secret, and skips the
// redaction pass, which would double its cost on the hottest path.
import "./compat/tracing-channel.ts";
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config.ts";

export type { Logger };

export interface Loggers {
  logger: Logger;
  /** For the per-request lines only: request id, method, route, path, status, duration, user id. */
  access: Logger;
  /** Writes out whatever is buffered; call before exiting. */
  flush(): void;
}

const FLUSH_EVERY_MS = 100;

/**
 * Both loggers write to one buffered sink on stdout (Bun's FileSink: a native buffer, cheaper than
 * pino's own destination, which measures every line's byte length). Access lines wait up to 100 ms
 * in the buffer; any other line flushes it at once, so a warning or an error is never held back.
 */
export function createLoggers(level: LogLevel, destination?: DestinationStream): Loggers {
  const options = { level, base: { service: "svc" }, timestamp: pino.stdTimeFunctions.isoTime };
  const redact = { paths: ["password", "*.password", "token", "*.token", "authorization", "*.authorization"], censor: "[redacted]" };
  if (destination) {
    return { logger: pino({ ...options, redact }, destination), access: pino(options, destination), flush: () => {} };
  }
  const sink = Bun.stdout.writer({ highWaterMark: 64 * 1024 });
  const flush = () => void sink.flush();
  setInterval(flush, FLUSH_EVERY_MS).unref();
  return {
    logger: pino({ ...options, redact }, { write: (line: string) => void (sink.write(line), sink.flush()) }),
    access: pino(options, { write: (line: string) => void sink.write(line) }),
    flush,
  };
}
