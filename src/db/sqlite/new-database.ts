// A first start's database: the empty, migrated file made at bundle time (empty-database.macro.ts),
// written whole. Building it statement by statement, as SQLite and the migrations would, runs every
// migration's statements and waits on the disk twice (the switch to WAL, the migrations' commit);
// writing it whole waits once (docs/performance.md, "Footprint"). Each copy gets an identity and an epoch of its
// own, put in place of the image's as it is written: no statement, no second wait, and no two databases made
// from one binary's image share an identity.
import { Database } from "bun:sqlite";
import { dirname } from "node:path";
import { nodeFs } from "../../process/node-fs.ts";
import { newIdentity } from "../identity.ts";
import { makePrivateFolder, PRIVATE_FILE } from "./file.ts";
import { emptyDatabaseImage } from "./empty-database.macro.ts" with { type: "macro" };

const IMAGE = emptyDatabaseImage();

/**
 * The empty database's file, as placeEmptyDatabase writes it: with a new identity and epoch. Each is 16 hex digits
 * as the image's were, in the table's row and the primary key's index: the same length, so every page, record
 * header and order stays as it was (SQLite keeps no checksum of a page).
 */
export function emptyDatabase(): Uint8Array<ArrayBuffer> {
  const file = Bun.gunzipSync(Buffer.from(IMAGE.image, "base64"));
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  for (const old of [IMAGE.identity, IMAGE.epoch]) {
    const text = Buffer.from(old, "latin1");
    const replacement = Buffer.from(newIdentity(), "latin1");
    for (let at = bytes.indexOf(text); at !== -1; at = bytes.indexOf(text, at + text.length))
      replacement.copy(bytes, at);
  }
  return file;
}

/**
 * An in-memory database holding the empty database (no migration to run, as for a file): its header says
 * "rollback journal", which an in-memory database keeps, where the image's says WAL.
 */
export function emptyMemoryDatabase(): Database {
  const bytes = emptyDatabase();
  bytes[18] = 1;
  bytes[19] = 1;
  return Database.deserialize(bytes, { strict: true });
}

/**
 * Puts the empty database at `path` unless a file is there by then; true when `path` now holds a
 * database (this one, or one another process put there first). False when the image could not be
 * placed (no space, no permission, a file system without hard links): nothing is left behind, and
 * the caller creates the database the long way, which fails, if it must, in the system's or SQLite's words.
 */
export function placeEmptyDatabase(path: string): boolean {
  return placeImage(path) !== "failed";
}

/**
 * placeEmptyDatabase's work, saying whose file `path` holds after it: "placed", this image, written
 * whole and synced, which a start need not check for damage nor migrate; "present", a file another
 * process put there meanwhile, which it must.
 */
export function placeImage(path: string): "placed" | "present" | "failed" {
  const fs = nodeFs();
  // The process id keeps two processes' scratch files apart; one of the same name can only be a
  // leftover of a process that died while writing it.
  const scratch = `${path}.${process.pid}.new`;
  let written = false;
  let placed: "placed" | "present" = "placed";
  try {
    makePrivateFolder(dirname(path));
    // The owner's alone (as every file svc makes: accounts and sessions are in it); SQLite gives its
    // -wal and -shm files the database's mode. The umask may take more away, never add.
    const fd = fs.openSync(scratch, "w", PRIVATE_FILE);
    written = true;
    try {
      fs.writeSync(fd, emptyDatabase());
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    // A link, not a rename: it never replaces a file, so a database another process made (and may
    // be writing) in the meantime stays as it is.
    try {
      fs.linkSync(scratch, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      placed = "present";
    }
    syncFolder(dirname(path));
    return placed;
  } catch {
    return "failed";
  } finally {
    // A scratch file that cannot be removed is only clutter beside the database.
    if (written) fs.rmSync(scratch, { force: true });
  }
}

/** Makes the new name survive a power cut; some file systems cannot sync a folder, and then it is as before. */
export function syncFolder(folder: string): void {
  const fs = nodeFs();
  try {
    const fd = fs.openSync(folder, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Nothing to do: the link is made and the file's contents are on the disk.
  }
}
