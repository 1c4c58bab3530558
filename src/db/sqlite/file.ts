// What svc asks of an SQLite file before and besides serving from it: is it there, and is it sound.
import { Database } from "bun:sqlite";
import { isAbsolute, resolve } from "node:path";
import { nodeFs } from "../../process/node-fs.ts";

/** The mode of every file svc makes: its owner's alone. SQLite gives a database's -wal and -shm its mode. */
export const PRIVATE_FILE = 0o600;

/** The mode of every folder svc makes (the data folder and any parent): nobody else may swap svc.db in it. */
export const PRIVATE_FOLDER = 0o700;

/**
 * Makes the folder `path` and any parent it lacks, each PRIVATE_FOLDER: without a mode, they would
 * follow the umask (0777 under umask 000). A umask only takes away, so none is wider. Returns the
 * first folder it made (undefined: all were there), as mkdirSync does.
 */
export function makePrivateFolder(path: string): string | undefined {
  return nodeFs().mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER });
}

/**
 * Makes an empty file of mode PRIVATE_FILE at `path` for SQLite to fill (an empty file is an empty
 * database), where SQLite would make it 0644. With `exclusive`, a file already there is an error.
 */
export function createPrivateFile(path: string, exclusive: boolean): void {
  const fs = nodeFs();
  fs.closeSync(fs.openSync(path, exclusive ? "wx" : "a", PRIVATE_FILE));
}

/** A read-write connection to the database file at `path`, never making one; null when it cannot be opened. */
export function openExisting(path: string): Database | null {
  try {
    return new Database(path, { readwrite: true, create: false });
  } catch {
    return null;
  }
}

/** Now, as a file name's suffix tells it: 20261121T100000Z. */
export function utcStamp(): string {
  return new Date().toISOString().replace(/[-:]|\.\d+/g, "");
}

/**
 * What SQLite's own check finds wrong, one line each, at most `limit`; none for a sound file.
 * quick_check reads every page but skips index contents: the start-up check; integrity_check is whole.
 */
export function integrityProblems(client: Database, check: "quick_check" | "integrity_check", limit: number): string[] {
  const rows = client.query<Record<string, string>, []>(`PRAGMA ${check}(${limit})`).all();
  const lines = rows
    .flatMap((row) => Object.values(row)[0]!.split("\n"))
    .filter((line) => line !== "ok" && !line.startsWith("*** in database"));
  return lines.slice(0, limit);
}

/** The first problem quick_check finds, or null for a sound file; what stops it other than damage is thrown. */
export function firstDamage(client: Database): string | null {
  try {
    return integrityProblems(client, "quick_check", 1)[0] ?? null;
  } catch (error) {
    // Some damage stops the check itself ("database disk image is malformed"). Anything else (a full
    // disk, an I/O error) says nothing of the file's pages: not damage, and no reason to restore it.
    if (!isDamage(error)) throw error;
    return error instanceof Error ? error.message : String(error);
  }
}

/** Whether SQLite failed because what it read is not a sound database: SQLITE_CORRUPT*, SQLITE_NOTADB. */
export function isDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/**
 * Why `path` names no SQLite database to read, by its full path (a command run in the wrong folder
 * shows where it looked); null when a file is there. Nothing is created.
 */
export function missingSqlite(path: string): string | null {
  if (path === ":memory:") return "an in-memory database is always empty: name a file";
  if (nodeFs().existsSync(path)) return null;
  const relative = isAbsolute(path) ? "" : ` (the path ${path} is taken from the current folder)`;
  return `no database at ${resolve(path)}${relative}`;
}
