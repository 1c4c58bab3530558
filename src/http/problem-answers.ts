// The one onError that turns every failure inside Elysia into problem+json (the rest of what every
// request goes through is in request-pipeline.ts).
import { Elysia, ValidationError } from "elysia";
import {
  AppError,
  internalError,
  invalidFields,
  problemResponse,
  Replayed,
  UNKNOWN_FIELD,
  type FieldError,
} from "../errors/index.ts";
import type { Logger } from "../observability/log.ts";
import { RULE_MESSAGE } from "./openapi.ts";
import { logIds } from "./request-context.ts";
import { type Answered, requestFacts } from "./request-pipeline.ts";

export interface ProblemAnswersOptions {
  logger: Logger;
  /** Methods the app answers on a path; called only for unmatched requests. */
  methodsFor: (path: string) => string[];
  /** The request pipeline's record of an answer (request-pipeline.ts): metrics and the access line. */
  answered?: (context: Answered, response: Response) => Response | undefined | void;
}

export function problemAnswers({ logger, methodsFor, answered }: ProblemAnswersOptions) {
  /** `appError` as problem+json; a 5xx is logged with the request's ids, the client learns no more. */
  const failure = (error: unknown, appError: AppError, ids: Parameters<typeof logIds>[0]) => {
    if (appError.status >= 500) logger.error({ ...logIds(ids), err: error }, "request failed");
    return problemResponse(appError);
  };
  return new Elysia({ name: "svc/problem-answers" })
    .use(requestFacts)
    .onError({ as: "global" }, ({ code, error, path, set, request, route, requestInfo }) => {
      // A repeat under an Idempotency-Key, answered from before its token was revoked (idempotency.ts):
      // its stored answer. Elysia answers a thrown error with its own status unless told otherwise.
      const response =
        error instanceof Replayed
          ? error.response
          : failure(error, toAppError(code, error, path, methodsFor), requestInfo);
      set.status = response.status;
      // The pipeline stamps, counts and logs it (a copy when its headers cannot change).
      return (requestInfo && answered?.({ request, requestInfo, route, path, set }, response)) || response;
    });
}

function toAppError(code: unknown, error: unknown, path: string, methodsFor: (path: string) => string[]): AppError {
  if (error instanceof AppError) return error;
  switch (code) {
    case "PARSE": {
      const cause = (error as Error).cause;
      return cause instanceof AppError ? cause : new AppError("malformed_json", "The body is not valid JSON.");
    }
    case "VALIDATION":
      return validationError(error as ValidationError);
    case "NOT_FOUND": {
      const allowed = methodsFor(path);
      if (allowed.length === 0) return new AppError("not_found", `Nothing lives at ${path}.`);
      return new AppError("method_not_allowed", `${path} answers ${allowed.join(", ")}.`, {
        headers: { allow: allowed.join(", ") },
      });
    }
    default:
      return internalError(error);
  }
}

/** Elysia's schema failures as per-field errors, naming unknown fields as such. */
function validationError(error: ValidationError): AppError {
  const errors: FieldError[] = [];
  for (const issue of error.all) {
    const field = "path" in issue && issue.path ? issue.path.slice(1).replaceAll("/", ".") : "body";
    if (errors.some((e) => e.field === field)) continue;
    const isUnknown = issue.summary?.includes("should not be provided") === true;
    // A schema's own message for its rule (users/model.ts); TypeBox's is the fallback.
    const ruleMessage =
      "schema" in issue && typeof issue.schema?.[RULE_MESSAGE] === "string"
        ? (issue.schema[RULE_MESSAGE] as string)
        : null;
    errors.push({
      field,
      message: isUnknown
        ? UNKNOWN_FIELD
        : field === "body"
          ? "must be a JSON object"
          : (ruleMessage ?? issue.message.toLowerCase()),
    });
  }
  return invalidFields(errors);
}
