// Subscription cursors: the database's identity and a change's number, as one opaque string. Numbers
// are zero-padded, so that within one database a later cursor also sorts later as text.
import { AppError } from "../errors/index.ts";

export interface Cursor {
  database: string;
  seq: number;
}

const FORMAT = /^(\d{16})\.([0-9a-f]{1,64})$/;

export function formatCursor({ database, seq }: Cursor): string {
  return `${String(seq).padStart(16, "0")}.${database}`;
}

/** The cursor a client sent back; throws validation_failed for text svc never gave. */
export function parseCursor(text: string): Cursor {
  const match = FORMAT.exec(text);
  if (!match) {
    throw new AppError("validation_failed", "after is not a cursor svc gave: send an event's cursor back as it came.", {
      errors: [{ field: "after", message: "must be a cursor from an earlier event" }],
    });
  }
  return { seq: Number(match[1]), database: match[2]! };
}
