// Errors as they may be logged or printed: without the values a failed statement carried. Drizzle
// puts every bound parameter into its error message (password hashes included), and a database may
// quote the failing row in its message or `detail` (a trigger raising `'%', NEW` quotes all of it);
// pino's own serializer would copy all of that, with every cause's message. Every log line (pino's
// `err` serializer) and every command's failure message go through here.
import { databaseMessage } from "./safe-database-errors.ts";

/** What a logged error shows: its kind, message and stack, the driver's codes, and its cause's the same. */
export interface SafeError {
  type: string;
  message: string;
  stack?: string;
  code?: string;
  errno?: string | number;
  /** The constraint, table or column a database names: schema, never data. */
  constraint?: string;
  table?: string;
  column?: string;
  cause?: SafeError;
}

const MAX_CAUSES = 5;
const SCHEMA_FIELDS = ["constraint", "table", "column"] as const;

// Drizzle's "Failed query: <sql>\nparams: <values>": the values run to the stack frames or the end.
const PARAMS = /\nparams: [\s\S]*?(?=\n {4}at |$)/g;
// A PHC string: $argon2id$v=19$m=19456,t=2,p=1$salt$digest, commas included.
const ARGON2_HASH = /\$argon2(?:id|i|d)\$[^\s"'`)\]}]*/g;
const JWT = /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g;
const FAILING_ROW = /Failing row contains \([\s\S]*?\)(?=\.?\s*$|\n)/gm;
const FRAME = /^\s+at /;

/**
 * The text with statement parameters, password hashes, tokens and quoted rows taken out: for messages
 * that are not a database's (those are allow-listed, safe-database-errors.ts), as a second line of defence.
 */
export function scrub(text: string): string {
  return text
    .replace(PARAMS, "")
    .replace(ARGON2_HASH, "[hash]")
    .replace(JWT, "[token]")
    .replace(FAILING_ROW, "Failing row contains (…)");
}

/** The error for a log line: only fields known to hold no data, every text made safe, causes likewise. */
export function safeError(error: unknown): SafeError {
  const errors = causes(error);
  const withheld = withheldTexts(errors);
  let safe: SafeError | undefined;
  for (let i = errors.length - 1; i >= 0; i--) safe = oneError(errors[i], withheld, safe);
  return safe!;
}

/**
 * One line for a person: the innermost cause says what went wrong (the driver's message), the outer
 * errors where. Made safe as a log line is.
 */
export function describeError(error: unknown): string {
  const messages: string[] = [];
  for (let safe: SafeError | undefined = safeError(error); safe; safe = safe.cause) {
    const first = safe.message.split("\n")[0]!.trim();
    if (first && !messages.includes(first)) messages.push(first);
  }
  return messages.reverse().join(" — ") || "unknown error";
}

/** The error and its causes, outermost first. A GraphQL error wraps the resolver's as originalError. */
function causes(error: unknown): unknown[] {
  const chain = [error];
  for (let e = error; e instanceof Error && chain.length <= MAX_CAUSES; ) {
    e = e.cause ?? (e as Error & { originalError?: unknown }).originalError;
    if (e === undefined || e === null) break;
    chain.push(e);
  }
  return chain;
}

/**
 * Each database message the chain holds, with what may be said instead: a wrapper (a GraphQL error, a
 * rethrow with a prefix) may have copied it into its own message.
 */
function withheldTexts(errors: unknown[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const e of errors) {
    if (!(e instanceof Error)) continue;
    const said = databaseMessage(e);
    if (said === undefined || said === e.message || e.message === "") continue;
    pairs.push([e.message, said]);
    const first = e.message.split("\n")[0]!;
    if (first !== e.message && first !== said) pairs.push([first, said]);
  }
  return pairs;
}

function oneError(error: unknown, withheld: [string, string][], cause: SafeError | undefined): SafeError {
  if (!(error instanceof Error)) return { type: typeof error, message: scrub(replaced(String(error), withheld)) };
  const fields = error as Error & Record<string, unknown>;
  const type = error.constructor?.name && error.constructor.name !== "Error" ? error.constructor.name : error.name;
  const message = databaseMessage(error) ?? scrub(replaced(error.message, withheld));
  const safe: SafeError = { type, message };
  // The stack's first lines repeat the message: rebuilt from the safe one and the frames alone.
  if (error.stack)
    safe.stack = [`${type}: ${message}`, ...error.stack.split("\n").filter((l) => FRAME.test(l))].join("\n");
  if (typeof fields.code === "string") safe.code = fields.code;
  if (typeof fields.errno === "string" || typeof fields.errno === "number") safe.errno = fields.errno;
  for (const key of SCHEMA_FIELDS) if (typeof fields[key] === "string") safe[key] = fields[key];
  if (cause) safe.cause = cause;
  return safe;
}

function replaced(text: string, withheld: [string, string][]): string {
  for (const [raw, said] of withheld) text = text.replaceAll(raw, said);
  return text;
}
