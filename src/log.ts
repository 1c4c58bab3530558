// JSON lines on stdout. General logging goes through pino, which redacts secrets wherever they might
// be passed in. The per-request access line has a fixed set of fields, none of them secret, and is
// written by a fixed serializer in pino's own line format, about a tenth of what pino costs per line
// (bun run bench:micro; bench/results.md).
import "./compat/tracing-channel.ts";
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config.ts";
import { safeError } from "./safe-errors.ts";

export type { Logger };

export interface AccessEntry {
  /** Written as is: beginRequest keeps only ids of letters, digits and ._:- */
  requestId: string;
  method: string;
  /** The route template (one of svc's own paths) or "unmatched": written as is. */
  route: string;
  path: string;
  status: number;
  durationMs: number;
  userId: string | null;
}

export interface AccessLog {
  /** False when the level is above info: callers skip building entries. */
  readonly enabled: boolean;
  completed(entry: AccessEntry): void;
}

export interface Loggers {
  logger: Logger;
  /** One line per answered request: request id, method, route, path, status, duration, user id. */
  access: AccessLog;
  /** Writes out whatever is buffered; call before exiting. */
  flush(): void;
}

const FLUSH_EVERY_MS = 100;
/** About 70 access lines: one write(2) for them instead of one each. */
const BATCH_CHARS = 16 * 1024;
const INFO = 30;

/**
 * Both write to stdout through one batch. Access lines wait up to 100 ms (or until 16 KiB have
 * gathered); any other line goes out at once with whatever waits before it, so a warning or an error
 * is never held back and the order of lines is kept.
 */
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
    return { logger, access: accessLog(logger, (line) => void destination.write(line)), flush: () => {} };
  }
  const sink = Bun.stdout.writer();
  const out = lineBatch((chunk) => void (sink.write(chunk), sink.flush()));
  setInterval(out.flush, FLUSH_EVERY_MS).unref();
  // The writer writes at once while the pipe or file takes it, so this keeps a crash's last lines.
  process.on("exit", out.flush);
  const logger = pino({ ...options, redact }, { write: out.now });
  return { logger, access: accessLog(logger, out.hold), flush: out.flush };
}

export interface LineBatch {
  /** Keeps a line for the next write. */
  hold(line: string): void;
  /** Writes a line now, after everything held. */
  now(line: string): void;
  flush(): void;
}

/** Lines gathered in memory and written in batches: Bun's stdout writer makes a system call per write. */
export function lineBatch(write: (chunk: string) => void, batchChars = BATCH_CHARS): LineBatch {
  let held = "";
  const flush = () => {
    if (held.length === 0) return;
    const chunk = held;
    held = "";
    write(chunk);
  };
  return {
    hold(line) {
      held += line;
      if (held.length >= batchChars) flush();
    },
    now(line) {
      held += line;
      flush();
    },
    flush,
  };
}

/** Lines exactly as pino would write `logger.info({ request_id, ... }, "request completed")`. */
function accessLog(logger: Logger, write: (line: string) => void): AccessLog {
  const enabled = logger.isLevelEnabled("info");
  const now = isoClock();
  const method = lastQuoted();
  const path = lastQuoted();
  return {
    enabled,
    completed(e) {
      if (!enabled) return;
      const user = e.userId === null ? "" : `,"user_id":${quote(e.userId)}`;
      write(
        `{"level":${INFO},"time":"${now()}","service":"svc","request_id":"${e.requestId}","method":${method(e.method)},"route":"${e.route}","path":${path(e.path)},"status":${e.status},"duration_ms":${e.durationMs}${user},"msg":"request completed"}\n`,
      );
    },
  };
}

// What JSON must escape; everything else (and any UTF-16, which the sink encodes) goes in as is.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A JSON string literal; ids, methods, routes and paths need no escaping, so the scan usually suffices. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** quote() remembering its last answer: most lines repeat the method, and a busy path repeats too. */
function lastQuoted(): (text: string) => string {
  let last = "";
  let quoted = '""';
  return (text) => {
    if (text !== last) {
      last = text;
      quoted = quote(text);
    }
    return quoted;
  };
}

/** The current time as ISO 8601, formatted once per millisecond however many lines share it. */
function isoClock(): () => string {
  let at = 0;
  let text = "";
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      text = new Date(now).toISOString();
    }
    return text;
  };
}
