// Reads a JSON request body for Elysia's `parse` hook: 415 unless JSON, 413 past the limit, 400 unless it parses.
import { AppError } from "../errors.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function jsonBody(maxBytes: number) {
  return async ({ request }: { request: Request }): Promise<unknown> => {
    if (!JSON_TYPE.test(request.headers.get("content-type") ?? "")) {
      throw new AppError("unsupported_media_type", "The body must be JSON, sent with Content-Type: application/json.");
    }
    const bytes = await request.arrayBuffer();
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
    try {
      return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch {
      throw new AppError("malformed_json", "The body is not valid JSON.");
    }
  };
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The body must be at most ${maxBytes} bytes.`);
}
