// gzip, as streams through node:zlib: a snapshot is as large as the database, and a stream holds a few
// chunks of it at a time where Bun.gzipSync would hold all of it (twice). gzip rather than zstd: any box
// reads it back with gunzip, and svc's snapshots compress about as well either way (bench/results.md, "Figures behind the code").
import { createReadStream, createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { PRIVATE_FILE } from "../db/sqlite/file.ts";

const GZIP_MAGIC = [0x1f, 0x8b];
const SQLITE_MAGIC = new TextEncoder().encode("SQLite format 3\0");

/** Compresses the file at `source` into the new file `target` (mode 0600). */
export async function gzipFile(source: string, target: string): Promise<void> {
  await pipeline(createReadStream(source), createGzip(), newFile(target));
}

/**
 * Writes the database `stream` holds into the new file `target` (mode 0600): gunzipped, or as it is for
 * a plain SQLite file (`svc backup <file>` writes one). Rejects anything else, and gzip data cut short or
 * damaged, before it is all read.
 */
export async function writeDatabase(stream: ReadableStream<Uint8Array>, target: string): Promise<void> {
  const source = chunks(stream);
  try {
    const { head, replay } = await peek(source, SQLITE_MAGIC.length);
    const starts = (magic: ArrayLike<number>) => Array.from(magic).every((byte, i) => head[i] === byte);
    if (starts(GZIP_MAGIC)) await pipeline(replay, createGunzip(), newFile(target));
    else if (starts(SQLITE_MAGIC)) await pipeline(replay, newFile(target));
    else throw new Error("it is neither gzip data nor an SQLite database");
  } finally {
    // Refused half way: the rest is not fetched.
    await source.return(undefined);
  }
}

function newFile(path: string) {
  return createWriteStream(path, { flags: "wx", mode: PRIVATE_FILE });
}

/** The first `bytes` of `source` (fewer if it is shorter), and all of its chunks again, those first ones included. */
async function peek(source: AsyncGenerator<Uint8Array>, bytes: number) {
  const first: Uint8Array[] = [];
  let length = 0;
  while (length < bytes) {
    const next = await source.next();
    if (next.done) break;
    first.push(next.value);
    length += next.value.length;
  }
  async function* replay(): AsyncGenerator<Uint8Array> {
    yield* first;
    yield* source;
  }
  return { head: Buffer.concat(first).subarray(0, bytes), replay: replay() };
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if ((finished = done)) return;
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}
