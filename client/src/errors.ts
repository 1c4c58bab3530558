// Every failure the client reports is one SvcError: svc's problem details (REST), its GraphQL errors, and
// the two things that go wrong before svc answers (no answer at all, an answer that is not svc's).
import type { components } from "./openapi.generated.js";

/** The codes svc documents (Problem.code in its OpenAPI document): switch on these. */
export type ServerErrorCode = components["schemas"]["Problem"]["code"];
/**
 * svc's codes, and the client's own two: `network_error` (no answer: offline, refused, aborted, the
 * connection dropped) and `unexpected_response` (an answer svc would not give, as from a proxy's error page).
 */
export type ErrorCode = ServerErrorCode | "network_error" | "unexpected_response";

export interface FieldError {
  field: string;
  message: string;
}

/** One error of a GraphQL answer, as svc sends it. */
export interface GraphQLErrorEntry {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: {
    code?: string;
    reason?: string;
    errors?: FieldError[];
    currentVersion?: number;
    [key: string]: unknown;
  };
}

export interface SvcErrorInit {
  status: number;
  code: ErrorCode;
  title: string;
  detail: string;
  fields?: FieldError[];
  retryAfter?: number | null;
  requestId?: string | null;
  graphqlCode?: string | null;
  graphqlErrors?: GraphQLErrorEntry[];
  currentVersion?: number | null;
  cause?: unknown;
}

export class SvcError extends Error {
  /** The HTTP status; 0 when svc gave no answer. A GraphQL error in a 200 answer has 200. */
  readonly status: number;
  readonly code: ErrorCode;
  /** The code's short human name ("Username taken"). */
  readonly title: string;
  /** What went wrong this time; safe to show. */
  readonly detail: string;
  /** For validation_failed: one entry per bad field. Empty otherwise. */
  readonly fields: FieldError[];
  /** Seconds to wait before trying again (429, a 409 idempotency_key_in_flight, a 503), when svc said. */
  readonly retryAfter: number | null;
  /** svc's X-Request-Id for the request, to quote in a support ticket (it is in every log line of it). */
  readonly requestId: string | null;
  /** For GraphQL: extensions.code (UNAUTHENTICATED, CONFLICT, …). */
  readonly graphqlCode: string | null;
  /** For GraphQL: every error of the answer (this error describes the first). */
  readonly graphqlErrors: GraphQLErrorEntry[];
  /** For a GraphQL version_mismatch: the category's version now. */
  readonly currentVersion: number | null;

  constructor(init: SvcErrorInit) {
    super(init.detail, { cause: init.cause });
    this.name = "SvcError";
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.fields = init.fields ?? [];
    this.retryAfter = init.retryAfter ?? null;
    this.requestId = init.requestId ?? null;
    this.graphqlCode = init.graphqlCode ?? null;
    this.graphqlErrors = init.graphqlErrors ?? [];
    this.currentVersion = init.currentVersion ?? null;
  }
}

/** True when `error` is an SvcError, optionally with one of `codes`. */
export function isSvcError(error: unknown, ...codes: ErrorCode[]): error is SvcError {
  return error instanceof SvcError && (codes.length === 0 || codes.includes(error.code));
}

/** `likelyCause`: what the client can tell of why (a CORS refusal), said after the platform's message. */
export function networkError(cause: unknown, likelyCause?: string): SvcError {
  const aborted = cause instanceof Error && cause.name === "AbortError";
  const message = cause instanceof Error ? cause.message : String(cause);
  return new SvcError({
    status: 0,
    code: "network_error",
    title: aborted ? "Aborted" : "No answer",
    detail: likelyCause ? `${message}. ${likelyCause}` : message,
    cause,
  });
}

function retryAfterOf(response: Response): number | null {
  const value = response.headers.get("retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

interface ProblemBody {
  title?: unknown;
  detail?: unknown;
  code?: unknown;
  errors?: unknown;
}

/** unexpected_response for an answer of svc's that is not what its route answers; `detail` says how. */
export function unexpectedAnswer(response: Response, detail: string, cause?: unknown): SvcError {
  return new SvcError({
    status: response.status,
    code: "unexpected_response",
    title: "Unexpected response",
    detail,
    requestId: response.headers.get("x-request-id"),
    cause,
  });
}

/** The SvcError for a REST answer that is not a success: its problem details, or unexpected_response. */
export async function problemError(response: Response): Promise<SvcError> {
  const text = await response.text().catch(() => "");
  let body: ProblemBody | null = null;
  try {
    body = JSON.parse(text) as ProblemBody;
  } catch {
    body = null;
  }
  const common = {
    status: response.status,
    retryAfter: retryAfterOf(response),
    requestId: response.headers.get("x-request-id"),
  };
  if (body === null || typeof body !== "object" || typeof body.code !== "string") {
    return new SvcError({
      ...common,
      code: "unexpected_response",
      title: "Unexpected response",
      detail: `HTTP ${response.status} without problem details${text ? `: ${text.slice(0, 200)}` : ""}`,
    });
  }
  return new SvcError({
    ...common,
    code: body.code as ServerErrorCode,
    title: typeof body.title === "string" ? body.title : body.code,
    detail: typeof body.detail === "string" ? body.detail : body.code,
    fields: Array.isArray(body.errors) ? (body.errors as FieldError[]) : [],
  });
}

/**
 * GraphQL's own codes (for errors svc did not raise: a query that does not parse or validate) as svc's.
 * svc's errors carry their svc code in extensions.reason.
 */
const GRAPHQL_CODES: Record<string, ServerErrorCode> = {
  BAD_USER_INPUT: "validation_failed",
  GRAPHQL_PARSE_FAILED: "validation_failed",
  GRAPHQL_VALIDATION_FAILED: "validation_failed",
  // graphql-armor's refusal of a query too deep, too costly or with too many aliases.
  QUERY_LIMIT_EXCEEDED: "validation_failed",
  BAD_REQUEST: "validation_failed",
  UNAUTHENTICATED: "unauthorized",
  TOKEN_EXPIRED: "token_expired",
  FORBIDDEN: "forbidden",
  NOT_FOUND: "not_found",
  PRECONDITION_FAILED: "precondition_failed",
  TOO_MANY_REQUESTS: "too_many_requests",
  TOO_MANY_SUBSCRIPTIONS: "too_many_subscriptions",
  SERVICE_UNAVAILABLE: "database_unavailable",
  STORAGE_FULL: "storage_full",
  INTERNAL_SERVER_ERROR: "internal",
};

/** The SvcError for a GraphQL answer's errors (the first one decides the code). */
export function graphqlError(errors: GraphQLErrorEntry[], response: Response): SvcError {
  const first = errors[0] ?? { message: "GraphQL error without an error" };
  const extensions = first.extensions ?? {};
  const graphqlCode = typeof extensions.code === "string" ? extensions.code : null;
  const code: ErrorCode =
    typeof extensions.reason === "string"
      ? (extensions.reason as ServerErrorCode)
      : ((graphqlCode === null ? undefined : GRAPHQL_CODES[graphqlCode]) ?? "unexpected_response");
  return new SvcError({
    status: response.status,
    code,
    title: graphqlCode ?? "GraphQL error",
    detail: first.message,
    fields: Array.isArray(extensions.errors) ? extensions.errors : [],
    retryAfter: retryAfterOf(response),
    requestId: response.headers.get("x-request-id"),
    graphqlCode,
    graphqlErrors: errors,
    currentVersion: typeof extensions.currentVersion === "number" ? extensions.currentVersion : null,
  });
}
