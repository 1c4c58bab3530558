// GraphQL's side of the error table: AppError → extensions.code and .reason; anything unexpected is masked.
import { GraphQLError } from "graphql";
import { AppError } from "../errors/index.ts";

/** GraphQL's own errors (parse, validation, coercion), safe to show, as against an AppError or a fault. */
const graphqlOwn = (error: unknown, original: unknown) =>
  error instanceof GraphQLError && (!original || original instanceof GraphQLError);

/** Where a GraphQL error points in the document and the result. */
const locationOf = (error: GraphQLError | undefined) => ({
  nodes: error?.nodes,
  source: error?.source,
  positions: error?.positions,
  path: error?.path,
});

export function maskError(error: unknown): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof AppError) {
    const masked = fromAppError(original, error instanceof GraphQLError ? error : undefined);
    // An unauthenticated mutation is a 401 like any protected REST route, a subscription past a cap a
    // 429 (with Retry-After); Yoga reads and strips `http`.
    if (original.code === "unauthorized" || original.code === "too_many_subscriptions")
      masked.extensions.http = { status: original.status, headers: original.headers };
    return masked;
  }
  if (graphqlOwn(error, original)) return withCode(error as GraphQLError);
  return new GraphQLError("Unexpected error.", { extensions: { code: "INTERNAL_SERVER_ERROR" } });
}

/**
 * Every error a client sees has a code; variable coercion errors come without one. Yoga also copies a
 * request parser's `originalError` into extensions, which is internal detail and goes.
 */
function withCode(error: GraphQLError): GraphQLError {
  const { originalError, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
  // Yoga marks request errors (unparsable JSON, no query) `spec`, which makes them 200 for clients that
  // accept application/json; GraphQL over HTTP asks for 400 there too, so the mark goes.
  const http = extensions.http as { spec?: boolean } | undefined;
  const requestError = extensions.code === "BAD_REQUEST" && http?.spec === true;
  if (requestError) extensions.http = { ...http, spec: undefined };
  if (originalError === undefined && typeof extensions.code === "string" && !requestError) return error;
  return new GraphQLError(error.message, {
    ...locationOf(error),
    extensions: { ...extensions, code: typeof extensions.code === "string" ? extensions.code : "BAD_USER_INPUT" },
  });
}

/** True for errors maskError hides, which the server must log instead. */
export function isUnexpected(error: unknown): boolean {
  const original = error instanceof GraphQLError ? error.originalError : error;
  return !(original instanceof AppError) && !graphqlOwn(error, original);
}

/**
 * The GraphQL error for an AppError: `code` is GraphQL's class of failure (CONFLICT), `reason` svc's own
 * code (category_name_taken, version_mismatch), the one REST's Problem.code carries.
 */
export function fromAppError(appError: AppError, located?: GraphQLError): GraphQLError {
  const extensions: Record<string, unknown> = { ...appError.facts, code: appError.graphqlCode, reason: appError.code };
  if (appError.errors?.length) {
    extensions.field = appError.errors[0]!.field;
    extensions.errors = appError.errors;
  }
  return new GraphQLError(appError.message, { ...locationOf(located), originalError: undefined, extensions });
}

/** The Content-Type of svc's GraphQL answers, as Yoga writes it (REST's is etag.ts's JSON_CONTENT_TYPE). */
export const GRAPHQL_JSON_TYPE = "application/json; charset=utf-8";

/** A refusal (401, or the Idempotency-Key's own) in GraphQL's response shape, so GraphQL clients read it like any other error. */
export function errorResponse(error: AppError): Response {
  return new Response(JSON.stringify({ errors: [fromAppError(error).toJSON()] }), {
    status: error.status,
    headers: { ...error.headers, "content-type": GRAPHQL_JSON_TYPE },
  });
}
