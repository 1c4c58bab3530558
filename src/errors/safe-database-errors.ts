// What a database error may say in a log line or on a terminal: an allow-list, not a scrubber. A
// database's message can quote anything a statement touched (a trigger's `RAISE EXCEPTION '%', NEW`
// writes the whole row: hash, e-mail, digests), and no pattern finds every value in free text. So a
// database error keeps its own message only where its kind is known to name schema objects alone (a
// constraint, a table, a column); any other says its code and that the message was withheld.

/** The error's fields this module reads: whatever Bun's PostgreSQL and SQLite clients and Drizzle set. */
type Fields = Record<string, unknown>;

/**
 * PostgreSQL conditions whose message names only schema objects or states (never a value), by SQLSTATE;
 * their values, if any, are in `detail`, which is never shown.
 */
const PG_SPEAKING = new Set([
  "22001", // value too long for type character varying(n)
  "23502", // null value in column "c" of relation "t" violates not-null constraint
  "23503", // insert or update on table "t" violates foreign key constraint "c"
  "23505", // duplicate key value violates unique constraint "c"
  "23514", // new row for relation "t" violates check constraint "c"
  "23P01", // conflicting key value violates exclusion constraint "c"
  "25006", // cannot execute INSERT in a read-only transaction
  "40001", // could not serialize access due to concurrent update
  "40P01", // deadlock detected
  "42501", // permission denied for table t
  "42P01", // relation "t" does not exist
  "42703", // column "c" does not exist
  "53100", // could not extend file "base/…": No space left on device
  "53200", // out of memory
  "53300", // sorry, too many clients already
  "55P03", // could not obtain lock on row in relation "t"
  "57014", // canceling statement due to statement timeout
  "57P01", // terminating connection due to administrator command
  "57P02",
  "57P03", // the database system is starting up
]);

/**
 * A server's refusals of a connection, whose messages name only what svc sent it (the database, the role,
 * the client's host): said with their SQLSTATE, so that a start-up or `svc check` line tells what to fix.
 */
const PG_CONNECTION_REFUSALS = new Set([
  "3D000", // database "x" does not exist
  "28000", // role "x" does not exist; no pg_hba.conf entry for host "h", user "u", database "d"
  "28P01", // password authentication failed for user "u" (never the password)
]);

/**
 * Bun's own errors for a connection that did not open, in words an operator can act on; its own fixed
 * texts otherwise (they quote no value). The line they end names the database's URL without its password.
 */
const CLIENT_CONNECTION: Record<string, string> = {
  ERR_POSTGRES_CONNECTION_REFUSED: "connection refused: nothing listens at that host and port, or a firewall refuses",
  ERR_POSTGRES_CONNECTION_CLOSED: "the server closed the connection",
  ERR_POSTGRES_CONNECTION_FAILED: "the connection failed",
};

/** Names of the conditions most likely to be withheld, for the line that says so. */
const PG_CONDITIONS: Record<string, string> = {
  P0001: "raise_exception",
  P0002: "no_data_found",
  P0003: "too_many_rows",
  P0004: "assert_failure",
  "22P02": "invalid_text_representation",
  "22003": "numeric_value_out_of_range",
  "22007": "invalid_datetime_format",
  "22008": "datetime_field_overflow",
  "22021": "character_not_in_repertoire",
  "22023": "invalid_parameter_value",
  XX000: "internal_error",
};

/**
 * SQLite result codes whose message SQLite itself writes from schema names or a fixed text. A trigger's
 * RAISE (SQLITE_CONSTRAINT_TRIGGER) or an application function's error says whatever it was given.
 */
const SQLITE_SPEAKING =
  /^SQLITE_(ERROR|CONSTRAINT_(UNIQUE|PRIMARYKEY|NOTNULL|CHECK|FOREIGNKEY|DATATYPE|ROWID)|BUSY|LOCKED|FULL|IOERR|CORRUPT|READONLY|CANTOPEN|NOTADB|INTERRUPT|NOMEM|PERM|AUTH|TOOBIG|MISMATCH|SCHEMA|PROTOCOL|RANGE|NOLFS)(_\w+)?$/;

/** PL/pgSQL's own words for where an error was raised: a function's name and argument types, a line, a statement kind. */
const PLPGSQL_WHERE = /^PL\/pgSQL function [\w."$]+\([\w\s,."[\]]*\) line \d+ at [A-Z][A-Z ]*$/;

const WITHHELD = "its message is withheld, as it may quote values";

/**
 * What a database error may say, or undefined when `error` is no database's: a server's message where
 * its SQLSTATE or result code is known to quote no values, else the code and what raised it; Drizzle's
 * "Failed query" with the statement (svc's own text, with placeholders) and without its parameters.
 */
export function databaseMessage(error: Error): string | undefined {
  const fields = error as unknown as Fields;
  if (typeof fields.query === "string" && Array.isArray(fields.params)) return `Failed query: ${fields.query}`;
  const sqlstate = fields.errno;
  if (fields.code === "ERR_POSTGRES_SERVER_ERROR" && typeof sqlstate === "string")
    return postgresMessage(error.message, sqlstate, fields.where);
  if (error.name === "PostgresError" && typeof fields.code === "string" && fields.code.startsWith("ERR_POSTGRES_")) {
    return `${CLIENT_CONNECTION[fields.code] ?? firstLine(error.message)} (${fields.code})`;
  }
  const code = fields.code;
  if (error.name === "SQLiteError" && typeof code === "string") {
    if (SQLITE_SPEAKING.test(code)) return firstLine(error.message);
    return `SQLite ${code}${code === "SQLITE_CONSTRAINT_TRIGGER" ? " (a trigger's RAISE)" : ""}: ${WITHHELD}`;
  }
  return undefined;
}

function postgresMessage(message: string, sqlstate: string, where: unknown): string {
  if (PG_CONNECTION_REFUSALS.has(sqlstate)) return `${firstLine(message)} (SQLSTATE ${sqlstate})`;
  if (PG_SPEAKING.has(sqlstate)) return firstLine(message);
  const condition = PG_CONDITIONS[sqlstate];
  const raisedIn = typeof where === "string" ? firstLine(where) : "";
  const origin = PLPGSQL_WHERE.test(raisedIn) ? ` in ${raisedIn}` : "";
  return `PostgreSQL ${condition ? `${condition} (SQLSTATE ${sqlstate})` : `SQLSTATE ${sqlstate}`}${origin}: ${WITHHELD}`;
}

function firstLine(text: string): string {
  const end = text.indexOf("\n");
  return end === -1 ? text : text.slice(0, end);
}
