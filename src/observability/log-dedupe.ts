// Per-request database failures in the log: one warn line per event, not one error with a stack per request.
// While the database is gone every request fails the same way (bench/results.md, "Figures behind the code"); the first
// failure of a kind is a line at once, the same failure again within WINDOW_MS is only counted, and when the
// window ends the count is one line: `database unavailable (repeated N times in the last 10 s)`. A failure after that is a new
// event with a line of its own.
import type { Clock } from "../backup/clock.ts";
import { AppError } from "../errors/index.ts";
import type { Logger } from "./log.ts";
import { describeError } from "../errors/safe-errors.ts";

export const WINDOW_MS = 10_000;

/**
 * The AppError `database_unavailable` (503: the database is not answering) that `error` is, or wraps (a
 * GraphQL error's originalError, Elysia's error thrown from a hook with it as cause); undefined otherwise.
 */
export function databaseUnavailable(error: unknown): AppError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; depth++) {
    if (e instanceof AppError) return e.code === "database_unavailable" ? e : undefined;
    e = (e as { originalError?: unknown }).originalError ?? e.cause;
  }
  return undefined;
}

/**
 * `logger`, but a warn or error line whose `err` says the database is unavailable becomes a warn line
 * `database unavailable: <what happened>` (the driver's code and message, no stack; `database` names it
 * as describeDatabase does, without a password), at most one per kind
 * of failure per WINDOW_MS, with the repeats counted and summarised. Every other line passes as it is.
 */
export function summarisingRepeats(logger: Logger, clock: Clock, database: string): Logger {
  // One window for the database's unavailability, whatever each request met (an open connection closed,
  // a new one refused, a deadline passed): in an outage they come together, and are one event.
  const windows = new Map<string, { repeats: number; timer: unknown }>();
  const repeated = (fields: Record<string, unknown>, error: AppError) => {
    const kind = error.code;
    const open = windows.get(kind);
    if (open) {
      open.repeats++;
      return;
    }
    const message = `database unavailable: ${firstCause(error)}`;
    const { err: _err, ...rest } = fields;
    logger.warn({ ...rest, database, code: causeCode(error) }, message);
    const window = {
      repeats: 0,
      timer: clock.setTimeout(() => {
        windows.delete(kind);
        if (window.repeats > 0)
          logger.warn(
            { database, repeated: window.repeats, window_s: WINDOW_MS / 1000 },
            `database unavailable (repeated ${window.repeats} times in the last ${WINDOW_MS / 1000} s)`,
          );
      }, WINDOW_MS),
    };
    windows.set(kind, window);
  };
  const at =
    (level: "warn" | "error") =>
    (fieldsOrMessage: object | string, message?: string): void => {
      if (typeof fieldsOrMessage === "object") {
        const fields = fieldsOrMessage as Record<string, unknown>;
        const unavailable = databaseUnavailable(fields.err);
        if (unavailable) return repeated(fields, unavailable);
        return logger[level](fields, message!);
      }
      return level === "warn" ? logger.warn(fieldsOrMessage) : logger.error({}, fieldsOrMessage);
    };
  return {
    debug: (fields, message) => logger.debug(fields, message),
    info: ((fieldsOrMessage: object | string, message?: string) =>
      typeof fieldsOrMessage === "string"
        ? logger.info(fieldsOrMessage)
        : logger.info(fieldsOrMessage, message!)) as Logger["info"],
    warn: at("warn") as Logger["warn"],
    error: at("error") as Logger["error"],
    isLevelEnabled: (level) => logger.isLevelEnabled(level),
  };
}

/** What the driver said (its message, made safe: safe-errors.ts), without svc's statement or its own words. */
function firstCause(error: Error): string {
  let innermost: unknown = error;
  for (let e: unknown = error.cause; e instanceof Error; e = e.cause) innermost = e;
  return describeError(innermost);
}

/** The driver's code for what happened (ERR_POSTGRES_CONNECTION_CLOSED, a SQLSTATE), if the error carries one. */
function causeCode(error: Error): string | undefined {
  for (let e: unknown = error.cause; e instanceof Error; e = e.cause) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (typeof errno === "string") return errno;
    if (typeof code === "string") return code;
  }
  return undefined;
}
