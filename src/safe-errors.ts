// Errors as they may be logged or printed: without the values a failed statement carried. Drizzle
// puts every bound parameter into its error message (password hashes included), and PostgreSQL quotes
// the failing row back in `detail`; pino's own serializer would copy both, with every cause's message.
// Every log line (pino's `err` serializer) and every command's failure message go through here.

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
const ARGON2_HASH = /\$argon2(?:id|i|d)\$[^\s"'`,)\]}]*/g;
const JWT = /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g;
const FAILING_ROW = /Failing row contains \([\s\S]*?\)(?=\.?\s*$|\n)/gm;

/** The text with statement parameters, password hashes, tokens and quoted rows taken out. */
export function scrub(text: string): string {
  return text
    .replace(PARAMS, "")
    .replace(ARGON2_HASH, "[hash]")
    .replace(JWT, "[token]")
    .replace(FAILING_ROW, "Failing row contains (…)");
}

/** The error for a log line: only fields known to hold no data, every text scrubbed, causes likewise. */
export function safeError(error: unknown, depth = 0): SafeError {
  if (!(error instanceof Error)) return { type: typeof error, message: scrub(String(error)) };
  const fields = error as Error & Record<string, unknown>;
  const safe: SafeError = { type: error.constructor?.name || error.name, message: scrub(error.message) };
  if (error.stack) safe.stack = scrub(error.stack);
  if (typeof fields.code === "string") safe.code = fields.code;
  if (typeof fields.errno === "string" || typeof fields.errno === "number") safe.errno = fields.errno;
  for (const key of SCHEMA_FIELDS) if (typeof fields[key] === "string") safe[key] = fields[key];
  // A GraphQL error wraps the resolver's error as originalError rather than cause.
  const cause = error.cause ?? fields.originalError;
  if (cause !== undefined && cause !== null && depth < MAX_CAUSES) safe.cause = safeError(cause, depth + 1);
  return safe;
}

/**
 * One line for a person: the innermost cause says what went wrong (the driver's message), the outer
 * errors where. Scrubbed like a log line.
 */
export function describeError(error: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth <= MAX_CAUSES; depth++) {
    const safe = safeError(e, MAX_CAUSES);
    const first = safe.message.split("\n")[0]!.trim();
    if (first && !messages.includes(first)) messages.push(first);
    e = e instanceof Error ? (e.cause ?? (e as Error & { originalError?: unknown }).originalError) : undefined;
  }
  return messages.reverse().join(" — ") || "unknown error";
}
