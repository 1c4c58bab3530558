// The one error type services throw, and the one table that maps its codes to HTTP and GraphQL.

export interface FieldError {
  field: string;
  message: string;
}

const CATALOG = {
  validation_failed: { status: 400, title: "Invalid request", graphql: "BAD_USER_INPUT" },
  malformed_json: { status: 400, title: "Malformed JSON", graphql: "BAD_USER_INPUT" },
  invalid_reset_code: { status: 400, title: "Invalid reset code", graphql: "BAD_USER_INPUT" },
  invalid_mail_token: { status: 400, title: "Invalid link", graphql: "BAD_USER_INPUT" },
  mail_token_expired: { status: 400, title: "Link expired", graphql: "BAD_USER_INPUT" },
  passkey_registration_failed: { status: 400, title: "Passkey not registered", graphql: "BAD_USER_INPUT" },
  invalid_return_to: { status: 400, title: "Return address not allowed", graphql: "BAD_USER_INPUT" },
  invalid_oidc_code: { status: 400, title: "Invalid sign-in code", graphql: "BAD_USER_INPUT" },
  cookie_cross_site: { status: 400, title: "Session cookie would be dropped", graphql: "BAD_USER_INPUT" },
  unauthorized: { status: 401, title: "Unauthorized", graphql: "UNAUTHENTICATED" },
  invalid_credentials: { status: 401, title: "Invalid credentials", graphql: "UNAUTHENTICATED" },
  invalid_refresh_token: { status: 401, title: "Invalid refresh token", graphql: "UNAUTHENTICATED" },
  refresh_token_reused: { status: 401, title: "Refresh token reused", graphql: "UNAUTHENTICATED" },
  token_expired: { status: 401, title: "Token expired", graphql: "TOKEN_EXPIRED" },
  invalid_mfa_code: { status: 401, title: "Invalid code", graphql: "UNAUTHENTICATED" },
  invalid_mfa_token: { status: 401, title: "Invalid second-step token", graphql: "UNAUTHENTICATED" },
  mfa_token_expired: { status: 401, title: "Second-step token expired", graphql: "UNAUTHENTICATED" },
  invalid_passkey: { status: 401, title: "Passkey not accepted", graphql: "UNAUTHENTICATED" },
  forbidden: { status: 403, title: "Forbidden", graphql: "FORBIDDEN" },
  current_password_mismatch: { status: 403, title: "Current password does not match", graphql: "FORBIDDEN" },
  account_disabled: { status: 403, title: "Account disabled", graphql: "FORBIDDEN" },
  email_unverified: { status: 403, title: "E-mail address not verified", graphql: "FORBIDDEN" },
  mfa_step_up_required: { status: 403, title: "Second factor required", graphql: "FORBIDDEN" },
  recent_sign_in_required: { status: 403, title: "Recent sign-in required", graphql: "FORBIDDEN" },
  mfa_enrolment_required: { status: 403, title: "Second factor enrolment required", graphql: "FORBIDDEN" },
  csrf_refused: { status: 403, title: "Cross-site request refused", graphql: "FORBIDDEN" },
  signup_closed: { status: 403, title: "Sign-up closed", graphql: "FORBIDDEN" },
  invitation_required: { status: 403, title: "Invitation required", graphql: "FORBIDDEN" },
  invalid_invitation: { status: 403, title: "Invalid invitation", graphql: "FORBIDDEN" },
  not_found: { status: 404, title: "Not found", graphql: "NOT_FOUND" },
  method_not_allowed: { status: 405, title: "Method not allowed", graphql: "BAD_REQUEST" },
  username_taken: { status: 409, title: "Username taken", graphql: "CONFLICT" },
  email_taken: { status: 409, title: "E-mail taken", graphql: "CONFLICT" },
  category_name_taken: { status: 409, title: "Category name taken", graphql: "CONFLICT" },
  last_admin: { status: 409, title: "Last administrator", graphql: "CONFLICT" },
  version_mismatch: { status: 409, title: "Version mismatch", graphql: "CONFLICT" },
  idempotency_key_in_flight: { status: 409, title: "Idempotency key in flight", graphql: "IDEMPOTENCY_KEY_IN_FLIGHT" },
  backups_not_configured: { status: 409, title: "Backups not configured", graphql: "CONFLICT" },
  mail_not_configured: { status: 409, title: "Mail not configured", graphql: "CONFLICT" },
  mail_not_failed: { status: 409, title: "Mail not failed", graphql: "CONFLICT" },
  mail_not_resendable: { status: 409, title: "Mail not resendable", graphql: "CONFLICT" },
  email_verification_off: { status: 409, title: "E-mail verification off", graphql: "CONFLICT" },
  mfa_already_enabled: { status: 409, title: "Second factor already on", graphql: "CONFLICT" },
  mfa_not_enabled: { status: 409, title: "Second factor not on", graphql: "CONFLICT" },
  backup_in_progress: { status: 409, title: "Backup in progress", graphql: "CONFLICT" },
  identity_taken: { status: 409, title: "Identity linked to another account", graphql: "CONFLICT" },
  last_sign_in_method: { status: 409, title: "Last way to sign in", graphql: "CONFLICT" },
  precondition_failed: { status: 412, title: "Precondition failed", graphql: "PRECONDITION_FAILED" },
  payload_too_large: { status: 413, title: "Payload too large", graphql: "BAD_REQUEST" },
  unsupported_media_type: { status: 415, title: "Unsupported media type", graphql: "BAD_REQUEST" },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused", graphql: "IDEMPOTENCY_KEY_REUSED" },
  too_many_requests: { status: 429, title: "Too many requests", graphql: "TOO_MANY_REQUESTS" },
  idempotency_keys_exhausted: {
    status: 429,
    title: "Too many idempotency keys",
    graphql: "IDEMPOTENCY_KEYS_EXHAUSTED",
  },
  too_many_subscriptions: { status: 429, title: "Too many subscriptions", graphql: "TOO_MANY_SUBSCRIPTIONS" },
  internal: { status: 500, title: "Internal error", graphql: "INTERNAL_SERVER_ERROR" },
  database_unavailable: { status: 503, title: "Database unavailable", graphql: "SERVICE_UNAVAILABLE" },
  storage_full: { status: 503, title: "Storage full", graphql: "STORAGE_FULL" },
  oidc_provider_unavailable: { status: 503, title: "Sign-in provider unavailable", graphql: "SERVICE_UNAVAILABLE" },
} as const satisfies Record<string, { status: number; title: string; graphql: string }>;

export type ErrorCode = keyof typeof CATALOG;

/** Every code, in the catalogue's order (the OpenAPI document lists them so). */
export const ERROR_CODES = Object.keys(CATALOG) as [ErrorCode, ...ErrorCode[]];

/** The HTTP status an error code is answered with. */
export function statusOf(code: ErrorCode): number {
  return CATALOG[code].status;
}

export interface AppErrorOptions {
  /** Per-field problems, for validation failures. */
  errors?: FieldError[];
  /** Headers the HTTP response must carry (WWW-Authenticate, Allow, Retry-After). */
  headers?: Record<string, string>;
  /** Facts a client acts on beyond the code, sent as GraphQL extensions (currentVersion). */
  facts?: Record<string, string | number>;
  cause?: unknown;
}

/** An expected failure: its code is part of the public contract; its message is safe to show. */
export class AppError extends Error {
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly facts: Record<string, string | number> | undefined;

  constructor(
    readonly code: ErrorCode,
    detail?: string,
    options: AppErrorOptions = {},
  ) {
    super(detail ?? CATALOG[code].title, { cause: options.cause });
    this.name = "AppError";
    this.status = CATALOG[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
    this.facts = options.facts;
  }

  get title(): string {
    return CATALOG[this.code].title;
  }

  get graphqlCode(): string {
    return CATALOG[this.code].graphql;
  }
}

export const UNKNOWN_FIELD = "is not a known field";

/** The detail of a validation failure: unknown fields named first, since they are the likelier slip. */
export function validationDetail(errors: FieldError[]): string {
  const unknown = errors.filter((e) => e.message === UNKNOWN_FIELD).map((e) => e.field);
  return unknown.length > 0
    ? `Unknown field(s): ${unknown.join(", ")}.`
    : `Invalid value for ${errors.map((e) => e.field).join(", ")}.`;
}

/** A validation failure naming every invalid field. */
export function invalidFields(errors: FieldError[]): AppError {
  return new AppError("validation_failed", validationDetail(errors), { errors });
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
}

/** RFC 9457 problem details for an AppError. */
export function toProblem(error: AppError): Problem {
  const problem: Problem = {
    type: "about:blank",
    title: error.title,
    status: error.status,
    detail: error.message,
    code: error.code,
  };
  if (error.errors) problem.errors = error.errors;
  return problem;
}

/** A failure that is svc's own fault: a 500 whose details stay in the log, found there by the request id. */
export function internalError(cause: unknown): AppError {
  return new AppError("internal", "Something went wrong on our side; the request id identifies it.", { cause });
}

/** Thrown to answer with a stored response at once (see problem-answers.ts). */
export class Replayed extends Error {
  override name = "Replayed";
  constructor(readonly response: Response) {
    super("replayed");
  }
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problemResponse(error: AppError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(toProblem(error)), {
    status: error.status,
    headers: { ...headers, ...error.headers, "content-type": PROBLEM_CONTENT_TYPE },
  });
}

/** A command-line usage problem: the CLI prints it with the command's usage, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
