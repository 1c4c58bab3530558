// Reads a JSON request body for Elysia's `parse` hook: 415 unless JSON, 413 past the limit, 400 unless it parses.
import { AppError } from "../errors.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function jsonBody(maxBytes: number) {
  return async ({ request }: { request: Request }): Promise<unknown> => {
    if (!JSON_TYPE.test(request.headers.get("content-type") ?? "")) {
      throw new AppError("unsupported_media_type", "The body must be JSON, sent with Content-Type: application/json.");
    }
    const bytes = await readCapped(request, maxBytes);
    try {
      return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch {
      throw new AppError("malformed_json", "The body is not valid JSON.");
    }
  };
}

/**
 * The body's bytes, refusing past maxBytes. A declared Content-Length was already checked on arrival;
 * a chunked body is read piece by piece so an oversized one is never held whole.
 */
async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.headers.has("content-length") || !request.body) return new Uint8Array(await request.arrayBuffer());
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    total += read.value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks);
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The body must be at most ${maxBytes} bytes.`);
}
