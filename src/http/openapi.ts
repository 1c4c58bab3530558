// How a route describes itself in the OpenAPI 3.1 document (openapi-routes.ts serves it): `documented(...)`
// gives its success schemas and the problem+json errors each status can carry. Its vocabulary (schema names,
// `ref`, the problem schema) is openapi-schemas.ts's, re-exported here for the routes.
import { t, type TSchema } from "elysia";
import type { OpenAPIV3 } from "openapi-types";
import { statusOf, type ErrorCode } from "../errors/index.ts";
import { enumOf, ref } from "./openapi-schemas.ts";

export { enumOf, integer, pageAnswer, problemSchema, ref, RULE_MESSAGE, type SchemaName } from "./openapi-schemas.ts";

/** A query parameter the route reads itself (so Elysia does not describe it). */
export interface QueryParameter {
  name: string;
  description: string;
  schema: TSchema;
}

interface Success {
  status: number;
  description: string;
  schema?: TSchema;
  headers?: Record<string, string>;
}

export interface Doc {
  /** What a generated client calls it: createUser, login, … */
  operationId: string;
  summary: string;
  tag: "users" | "auth" | "admin" | "health";
  query?: QueryParameter[];
  /** A body the route reads itself (Elysia documents only the bodies it validates, always as required). */
  body?: { schema: TSchema; required: boolean };
  /** The route needs a bearer token; "or-body": a bearer token, or the credential its body may carry instead. */
  auth?: boolean | "or-body";
  /** The route honours Idempotency-Key. */
  idempotent?: boolean;
  /**
   * "read": an ETag, and If-None-Match (304). "write": held to If-Match and If-None-Match (412), its
   * answer tagged. "guarded": held to them too, its answer untagged (no representation of its own).
   */
  conditional?: "read" | "write" | "guarded";
  ok: Success;
  /** Other non-problem answers, such as health's 503 with the health body. */
  also?: Success[];
  errors: ErrorCode[];
}

const BEARER: Record<string, string[]> = { bearer: [] };
const NONE: Record<string, string[]> = {};

/** Headers every answer carries, and those particular statuses carry. */
const REQUEST_ID = { "X-Request-Id": { $ref: "#/components/headers/RequestId" } };
const STATUS_HEADERS: Record<string, Record<string, { description: string; schema: object }>> = {
  "401": {
    "WWW-Authenticate": {
      description: 'Bearer realm="svc", with error="invalid_token" when a token was sent.',
      schema: { type: "string" },
    },
  },
  "429": { "Retry-After": { description: "Seconds to wait before trying again.", schema: { type: "integer" } } },
  "409": {
    "Retry-After": {
      description: "With idempotency_key_in_flight: seconds to wait before sending the request again.",
      schema: { type: "integer" },
    },
  },
};

function response({ description, schema, headers = {} }: Success) {
  return {
    description,
    ...(schema && { content: { "application/json": { schema } } }),
    headers: {
      ...REQUEST_ID,
      ...Object.fromEntries(
        Object.entries(headers).map(([name, text]) => [name, { description: text, schema: { type: "string" } }]),
      ),
    },
  };
}

/** The codes by the status they are answered with, each list in the order given. */
function byStatus(codes: ErrorCode[]): Map<string, [ErrorCode, ...ErrorCode[]]> {
  const statuses = new Map<string, [ErrorCode, ...ErrorCode[]]>();
  for (const code of codes) {
    const status = String(statusOf(code));
    const listed = statuses.get(status);
    if (listed) listed.push(code);
    else statuses.set(status, [code]);
  }
  return statuses;
}

/**
 * Problem, its code narrowed to those one answer can carry: openapi-typescript makes that
 * `Problem & { code: "a" | "b" }`, so a generated client's error.code is the route's own codes.
 */
function problemWith(codes: [ErrorCode, ...ErrorCode[]]) {
  return t.Intersect([ref("Problem"), t.Object({ code: enumOf(codes) })]);
}

/** A request header a route honours when it is sent. */
const optionalHeader = (name: string, description: string, schema: object = { type: "string" }) =>
  ({ name, in: "header", required: false, description, schema }) as const;

const IDEMPOTENCY_KEY = optionalHeader(
  "Idempotency-Key",
  "Any 1-255 printable ASCII characters (a UUID, say). Sent again with the same request, it gets the first answer again (with Idempotent-Replayed: true) and changes nothing; kept for SVC_IDEMPOTENCY_TTL (24 h), at most SVC_IDEMPOTENCY_KEYS_PER_CALLER (1000) per caller (past it, 429 idempotency_keys_exhausted).",
  { type: "string", minLength: 1, maxLength: 255 },
);
const IF_NONE_MATCH = optionalHeader(
  "If-None-Match",
  "The ETag of the copy you hold: while it is current, 304 with no body.",
);
const IF_MATCH = optionalHeader(
  "If-Match",
  "The ETag of the version you read (compared strongly: a weak W/ tag never matches): if the record changed since, or has no version to match, 412 precondition_failed and nothing is written.",
);
const IF_NONE_MATCH_WRITE = optionalHeader(
  "If-None-Match",
  "* or a list of ETags: when the record exists (*) or is at one of them, 412 precondition_failed and nothing is written. A write never answers 304.",
);

/** The route's OpenAPI `detail`: its name, summary, tag, security, parameters, and every answer it can give. */
export function documented({
  operationId,
  summary,
  tag,
  query,
  body,
  auth = false,
  idempotent = false,
  conditional,
  ok,
  also = [],
  errors,
}: Doc) {
  const replayed = {
    "Idempotent-Replayed": "true when this is the kept answer to an earlier request with the same Idempotency-Key",
  };
  const tagged: Record<string, string> =
    conditional === "read" || conditional === "write"
      ? { ETag: "A strong tag of this representation: send it as If-None-Match, or If-Match to update" }
      : {};
  const first: Success = { ...ok, headers: { ...ok.headers, ...(idempotent ? replayed : {}), ...tagged } };
  const responses: Record<string, unknown> = Object.fromEntries(
    [first, ...also].map((answer) => [answer.status, response(answer)]),
  );
  if (conditional === "read") {
    responses["304"] = response({
      status: 304,
      description: "Not modified: If-None-Match names the current tag",
      headers: tagged,
    });
  }
  const all = new Set<ErrorCode>(errors);
  if (auth) all.add("unauthorized");
  if (conditional === "write" || conditional === "guarded") all.add("precondition_failed");
  if (idempotent) {
    for (const code of [
      "validation_failed",
      "idempotency_key_in_flight",
      "idempotency_key_reused",
      "idempotency_keys_exhausted",
    ] as const)
      all.add(code);
  }
  // Any route on the database may find it not answering; a route that writes, its storage full.
  if (tag !== "health") all.add("database_unavailable");
  if (tag !== "health" && (conditional === "write" || conditional === "guarded" || idempotent)) all.add("storage_full");
  for (const [status, codes] of byStatus([...all, "internal"])) {
    const listed = (responses[status] as { description: string } | undefined)?.description;
    responses[status] = {
      description: [...(listed ? [listed] : []), ...codes].join(", "),
      headers: { ...REQUEST_ID, ...STATUS_HEADERS[status] },
      content: { "application/problem+json": { schema: problemWith(codes) } },
    };
  }
  // TypeBox schemas are JSON Schemas, which OpenAPI 3.1 takes as they are; only their TS types differ.
  return {
    operationId,
    summary,
    tags: [tag],
    // Public operations say so: an empty requirement, not an absent one. An alternative empty one makes the
    // bearer token optional (the body then carries the credential).
    security: auth === "or-body" ? [BEARER, NONE] : auth ? [BEARER] : [],
    ...(body && {
      requestBody: { required: body.required, content: { "application/json": { schema: body.schema } } },
    }),
    ...((query || idempotent || conditional) && {
      parameters: [
        ...(query ?? []).map(({ name, description, schema }) => ({
          name,
          in: "query" as const,
          required: false,
          description,
          schema,
        })),
        ...(idempotent ? [IDEMPOTENCY_KEY] : []),
        ...(conditional === "read" ? [IF_NONE_MATCH] : conditional ? [IF_MATCH, IF_NONE_MATCH_WRITE] : []),
      ],
    }),
    responses: responses as OpenAPIV3.ResponsesObject,
  };
}
