// Strong ETags for JSON reads, from the very bytes the caller is sent: whatever changes what they
// would see (another user's write, their own e-mail on their page) changes the tag. A read whose
// If-None-Match names the current tag gets 304 and no body; a write is held to RFC 9110's
// preconditions before it runs (412, never 304: see users, admin and GraphQL).
import { LRUCache } from "lru-cache";
import { AppError } from "../errors/index.ts";

const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

/**
 * Tags of bodies sent lately, by the body. A page or an answer served again is the same string, held by
 * the caches, whose hash the JavaScript engine has already: finding its tag costs less than hashing
 * 16 KB again (bench/results.md, "Measured by hand"). Bounded by the characters held: the bodies are
 * shared with the caches, so this keeps little alive of its own.
 */
const tags = new LRUCache<string, string>({
  max: 1024,
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (_, body) => Math.max(1, body.length),
});

/** The body's strong tag: its length and a 64-bit hash of it. */
export function etagOf(body: string): string {
  let tag = tags.get(body);
  if (tag === undefined) {
    tag = `"${body.length.toString(36)}-${Bun.hash(body).toString(36)}"`;
    tags.set(body, tag);
  }
  return tag;
}

/** If-None-Match's weak comparison: the header lists this tag, strong or weak, or is `*`. */
function namesWeakly(header: string, tag: string): boolean {
  // What a revalidating client sends back, the one tag as given or weak, at a tenth of the cost of reading a list.
  if (header === tag || (header.length === tag.length + 2 && header === `W/${tag}`)) return true;
  if (header.trim() === "*") return true;
  return header.split(",").some((item) => item.trim().replace(/^W\//, "") === tag);
}

/** If-Match's strong comparison: the header lists this very tag, or is `*`; a weak tag never matches. */
function namesStrongly(header: string, tag: string): boolean {
  if (header === tag || header.trim() === "*") return true;
  return header.split(",").some((item) => item.trim() === tag);
}

/** Elysia's `set`, as much of it as an answer's headers and status are written to. */
export interface AnswerSet {
  status?: number | string;
  headers: Record<string, string | number>;
}

/**
 * The JSON answer with its ETag, or an empty 304 when the request's If-None-Match already names it.
 * A string body is sent as it is (already JSON). `variant`: what else the answer says that the client
 * keeps with the body (a header such as X-Total-Count), so that the tag changes when it does.
 */
export function conditionalJson(request: Request, set: AnswerSet, body: unknown, variant?: string): string {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return conditionalText(request, set, text, JSON_CONTENT_TYPE, variant);
}

/** As conditionalJson, for a body already rendered with its own content type (GraphQL's answers). */
export function conditionalText(
  request: Request,
  set: AnswerSet,
  text: string,
  contentType: string,
  variant?: string,
): string {
  const tag = variant === undefined ? etagOf(text) : `${etagOf(text).slice(0, -1)}-${variant}"`;
  set.headers.etag = tag;
  set.headers["content-type"] = contentType;
  const wanted = request.headers.get("if-none-match");
  if (wanted !== null && namesWeakly(wanted, tag)) {
    set.status = 304;
    return "";
  }
  return text;
}

/** A write's answer as JSON with the ETag of the state it left, for the client's next If-Match. */
export function taggedJson(set: AnswerSet, body: unknown): string {
  const json = JSON.stringify(body);
  set.headers.etag = etagOf(json);
  set.headers["content-type"] = JSON_CONTENT_TYPE;
  return json;
}

/** Whether the request carries a precondition a write must meet (If-Match, If-None-Match). */
export function hasPreconditions(request: Request): boolean {
  return request.headers.has("if-match") || request.headers.has("if-none-match");
}

/**
 * RFC 9110 §13.2.2 for a write, before it runs: throws 412 precondition_failed unless If-Match names
 * the target's current representation (strongly: a weak tag never matches), or when If-None-Match
 * names it (weakly; `*` names any). `current` is the representation as GET shows it, or null when the
 * target has none (a create, /graphql): then If-Match cannot hold and If-None-Match always does.
 */
export function requirePreconditions(request: Request, current: object | null): void {
  const match = request.headers.get("if-match");
  const noneMatch = request.headers.get("if-none-match");
  if (match === null && noneMatch === null) return;
  const tag = current === null ? null : etagOf(JSON.stringify(current));
  if (match !== null && (tag === null || !namesStrongly(match, tag))) {
    throw new AppError(
      "precondition_failed",
      tag === null
        ? "If-Match names a version, and this target has none to match; nothing changed."
        : "The record changed since you read it (If-Match names another version, or a weak tag); read it again and retry.",
      // The version the record is at now, so a client need not guess whether its read is current.
      tag === null ? {} : { headers: { etag: tag } },
    );
  }
  if (noneMatch !== null && tag !== null && namesWeakly(noneMatch, tag)) {
    throw new AppError(
      "precondition_failed",
      "If-None-Match names the record's current version (or *, and the record exists); nothing changed.",
    );
  }
}
