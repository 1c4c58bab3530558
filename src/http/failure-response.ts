// The answer to a failure a route threw, in Elysia (problem-answers.ts) or out of it (the outer handler,
// GraphQL's request plugin). Apart from both so that serve.ts can load the outer handler without Elysia.
import { type AppError, problemResponse, Replayed } from "../errors.ts";
import type { LineLogger } from "../log-lines.ts";
import { logIds, type RequestInfo } from "./request-context.ts";

/**
 * A Replayed's stored answer, or `appError` as problem+json; a 5xx is logged with the request's ids, the client learns no more.
 */
export function answerFailure(
  error: unknown,
  appError: AppError,
  info: RequestInfo | undefined,
  logger: Pick<LineLogger, "error">,
): Response {
  if (error instanceof Replayed) return error.response;
  if (appError.status >= 500) logger.error({ ...logIds(info), err: error }, "request failed");
  return problemResponse(appError);
}
