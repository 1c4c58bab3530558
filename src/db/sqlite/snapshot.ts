// A consistent copy of a live SQLite database, for `svc backup` and for the snapshot kept before a
// migration: VACUUM INTO reads inside one transaction, so it sees one moment even while svc keeps
// writing, and writes a compact copy.
import type { Database } from "bun:sqlite";
import { nodeFs } from "../../process/node-fs.ts";
import { createPrivateFile } from "./file.ts";

/**
 * Writes what `client` reads now into `target`, a new file of mode 0600 (VACUUM INTO fills an empty
 * file, and would make one 0644). An error, and no file, when anything is there already.
 */
export function snapshotInto(client: Database, target: string): void {
  try {
    createPrivateFile(target, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      throw new Error(`${target} already exists; choose a new file`);
    throw error;
  }
  try {
    client.run("VACUUM INTO ?", [target]);
  } catch (error) {
    nodeFs().rmSync(target, { force: true });
    throw error;
  }
}
