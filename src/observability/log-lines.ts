// svc's log lines in pino's format, and the one batch they share on stdout, without pino itself.
// pino (log.ts) writes the app's other lines, and is loaded with the first of them; loading it costs
// start-up time and memory (the Node streams and worker threads it builds on), so `svc serve` writes its own
// few lines (listening, advice, stopping) and every access line with this (docs/performance.md, "Footprint"). The
// access line is a fixed set of fields, none of them secret; so are the lifecycle lines' fields.
import type { LogLevel } from "../config/index.ts";
import { safeError } from "../errors/safe-errors.ts";

/** pino's level numbers, for comparing levels; lines carry the names (log.ts's formatters.level). */
export const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity };
const INFO = LEVELS.info;
const NAMES: Record<number, string> = { 20: '"debug"', 30: '"info"', 40: '"warn"', 50: '"error"' };
const FLUSH_EVERY_MS = 100;
/** About 70 access lines: one write(2) for them instead of one each. */
const BATCH_CHARS = 16 * 1024;

export interface AccessEntry {
  /** svc's own (a UUID): written as is. */
  requestId: string;
  /** The client's X-Request-Id, or null. Written as is: beginRequest keeps only ids of letters, digits and ._:- */
  clientRequestId: string | null;
  method: string;
  /** The route template (one of svc's own paths) or "unmatched": written as is. */
  route: string;
  path: string;
  status: number;
  durationMs: number;
  userId: string | null;
  /** The client's address as SVC_TRUST_PROXY reads it ("unknown" in process). */
  clientAddress: string;
  /** The User-Agent header (cut short), or null. */
  userAgent: string | null;
}

export interface AccessLog {
  /** False when the level is above info: callers skip building entries. */
  readonly enabled: boolean;
  completed(entry: AccessEntry): void;
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

/** The part of a logger svc's own code uses: pino's Logger has it, and so has startLog's. */
export interface LineLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  info(message: string): void;
  warn(fields: object, message: string): void;
  warn(message: string): void;
  error(fields: object, message: string): void;
}

let stdoutLines: LineBatch | undefined;

/**
 * The process's one batch on stdout, shared by every logger writing there, so that the order of lines
 * is kept. Access lines wait up to 100 ms (or until 16 KiB have gathered); any other line goes out at
 * once with whatever waits before it, so a warning or an error is never held back.
 */
export function processLines(): LineBatch {
  if (stdoutLines) return stdoutLines;
  const sink = Bun.stdout.writer();
  const out = lineBatch((chunk) => void (sink.write(chunk), sink.flush()));
  setInterval(out.flush, FLUSH_EVERY_MS).unref();
  // The writer writes at once while the pipe or file takes it, so this keeps a crash's last lines.
  process.on("exit", out.flush);
  stdoutLines = out;
  return out;
}

/**
 * Lines as pino configured by log.ts writes them (level, time, service, the fields, msg), for fields
 * that are never secret: what pino's redaction would catch must not be given. An `err` goes through
 * safeError, as pino's serializer does.
 */
export function startLog(level: LogLevel, out: LineBatch = processLines()) {
  const threshold = LEVELS[level];
  const now = isoClock();
  const write = (n: number, fieldsOrMessage: object | string, message?: string) => {
    if (n < threshold) return;
    let fields = "";
    if (typeof fieldsOrMessage === "string") message = fieldsOrMessage;
    else {
      const { err, ...rest } = fieldsOrMessage as { err?: unknown };
      const all = err === undefined ? rest : { ...rest, err: safeError(err) };
      fields = JSON.stringify(all).slice(1, -1);
      if (fields) fields = `,${fields}`;
    }
    out.now(
      `{"level":${NAMES[n]},"time":"${now()}","service":"svc"${fields},"msg":${JSON.stringify(message ?? "")}}\n`,
    );
  };
  const logger: LineLogger = {
    debug: (fields: object, message: string) => write(LEVELS.debug, fields, message),
    info: (fields: object | string, message?: string) => write(LEVELS.info, fields, message),
    warn: (fields: object | string, message?: string) => write(LEVELS.warn, fields, message),
    error: (fields: object, message: string) => write(LEVELS.error, fields, message),
  };
  return { logger, access: accessLog(level, out.hold), flush: out.flush };
}

/** Lines exactly as pino would write `logger.info({ request_id, ... }, "request completed")`. */
export function accessLog(level: LogLevel, write: (line: string) => void): AccessLog {
  const enabled = LEVELS[level] <= INFO;
  const now = isoClock();
  const method = lastQuoted();
  const path = lastQuoted();
  const agent = lastQuoted();
  return {
    enabled,
    completed(e) {
      if (!enabled) return;
      const user = e.userId === null ? "" : `,"user_id":${quote(e.userId)}`;
      const client = e.clientRequestId === null ? "" : `,"client_request_id":"${e.clientRequestId}"`;
      write(
        `{"level":"info","time":"${now()}","service":"svc","request_id":"${e.requestId}"${client},"method":${method(e.method)},"route":"${e.route}","path":${path(e.path)},"status":${e.status},"duration_ms":${e.durationMs}${user},"client_address":${quote(e.clientAddress)},"user_agent":${e.userAgent === null ? "null" : agent(e.userAgent)},"msg":"request completed"}\n`,
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
