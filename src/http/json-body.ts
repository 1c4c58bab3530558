// Reads a JSON request body for Elysia's `parse` hook: 415 unless JSON, 413 past the limit, 400 unless it parses.
import { AppError, invalidFields } from "../errors/index.ts";
import { firstUnstorable, UNSTORABLE_MESSAGE } from "../lib/text.ts";

/** No svc body nests at all; this leaves room and still stops a parser being made to recurse deeply. */
export const MAX_NESTING = 32;

/** application/json and the +json types (application/graphql+json, …), with or without parameters. */
const JSON_MEDIA_TYPES = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The `parse` option for a JSON route. The "application/json" after the function is never reached
 * (the function answers or throws); it tells the OpenAPI generator which media type the body has.
 */
export function jsonBody(maxBytes: number): [ReturnType<typeof readJson>, "application/json"] {
  return [readJson(maxBytes), "application/json"];
}

export const notJson = () =>
  new AppError("unsupported_media_type", "The body must be JSON, sent with Content-Type: application/json.");

/** Whether a Content-Type names JSON (application/json, or a +json type such as application/graphql+json). */
export function isJsonType(contentType: string | null): boolean {
  return JSON_MEDIA_TYPES.test(contentType ?? "");
}

function readJson(maxBytes: number) {
  return async ({ request }: { request: Request }): Promise<unknown> => {
    if (!isJsonType(request.headers.get("content-type"))) throw notJson();
    return parseJson(await readCapped(request, maxBytes));
  };
}

/** The bytes as a JSON value, held to the rules above. */
function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError("malformed_json", "The body is not valid UTF-8.");
  }
  if (nestingDepth(text) > MAX_NESTING) {
    throw invalidFields([
      { field: "body", message: `must not nest objects or arrays deeper than ${MAX_NESTING} levels` },
    ]);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError("malformed_json", "The body is not valid JSON.");
  }
  // Every REST field at once, whatever route or database: such text is refused before it is used.
  const field = firstUnstorable(body);
  if (field !== null) throw invalidFields([{ field, message: UNSTORABLE_MESSAGE }]);
  return body;
}

/**
 * As readCapped, decoded as UTF-8 (as TextDecoder decodes: a leading BOM dropped, bad bytes as U+FFFD).
 * A declared length has been held to the limit by the outer handler, and Bun reads no more than it declares.
 */
export function readCappedText(request: Request, maxBytes: number): Promise<string> {
  if (request.headers.has("content-length") || !request.body) return request.text();
  return readCapped(request, maxBytes).then((bytes) => utf8.decode(bytes));
}

const utf8 = new TextDecoder();

/**
 * The body's bytes, refusing past maxBytes. A declared Content-Length was already checked on arrival;
 * a chunked body is read piece by piece so an oversized one is never held whole.
 */
export async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
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

/** The deepest nesting of [ and { outside strings; a malformed text just gets some number, JSON.parse judges it. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) deepest = Math.max(deepest, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The body must be at most ${maxBytes} bytes.`);
}

/**
 * The `parse` option for a route whose JSON body may be left out: an empty body reads as an empty
 * object (whatever Content-Type some client library added); anything sent is held to jsonBody's rules.
 */
export function optionalJsonBody(maxBytes: number): [ReturnType<typeof readJson>, "application/json"] {
  return [
    async ({ request }) => {
      const bytes = await readCapped(request, maxBytes);
      if (bytes.byteLength === 0) return {};
      if (!isJsonType(request.headers.get("content-type"))) throw notJson();
      return parseJson(bytes);
    },
    "application/json",
  ];
}

/** What a route reading a JSON body can be refused with, before its own errors (for its OpenAPI answers). */
export const BODY_ERRORS = [
  "validation_failed",
  "malformed_json",
  "payload_too_large",
  "unsupported_media_type",
] as const;
