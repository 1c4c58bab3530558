// The bearer check of a route: `.use(bearer(...))` gives the routes registered after it `caller` and its
// `token`.
import { Elysia } from "elysia";
import { type Awaitable, tryChain } from "../lib/awaitable.ts";
import type { UserRecord } from "../db/store.ts";
import { AppError, Replayed } from "../errors/index.ts";
import type { Idempotency } from "../http/idempotency.ts";
import type { RequestInfo } from "../http/request-context.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import type { Authenticator, Caller } from "./authenticator.ts";
import type { TokenVerifier, VerifiedToken } from "./tokens.ts";

export interface BearerOptions {
  /** Only administrators' tokens; any other gets 403. */
  admin?: boolean;
  /** A repeat under an Idempotency-Key whose first request revoked the token gets that request's answer. */
  idempotency?: Idempotency;
}

/**
 * The caller of a request and their token, at once when the authenticator knows them from memory;
 * throws (or rejects with) the request's refusal, or a Replayed answer.
 */
export type Identify = (
  request: Request,
  body: unknown,
  info?: RequestInfo,
  verifier?: TokenVerifier,
) => Awaitable<{ caller: UserRecord; token: VerifiedToken }>;

export function identifier(authenticator: Authenticator, { admin = false, idempotency }: BearerOptions = {}): Identify {
  /** The refusal, unless the request repeats one whose answer was lost. */
  async function refused(
    request: Request,
    authorization: string | null,
    body: unknown,
    error: unknown,
    verifier: TokenVerifier | undefined,
  ): Promise<never> {
    // A password change, logout or deletion whose answer was lost: its retry carries the very
    // token it revoked. Only a repeat of that request (same key, same body) gets its answer back.
    const subject = idempotency && error instanceof AppError && (await authenticator.subject(authorization, verifier));
    const replay = subject && (await idempotency.replayFor(subject, request, body ?? null));
    if (replay) throw new Replayed(replay);
    throw error;
  }

  return (request, body, info, verifier) => {
    const authorization = request.headers.get("authorization");
    const accept = ({ user: caller, token }: Caller) => {
      // For the access line (request-pipeline.ts).
      if (info) info.userId = caller.id;
      // The role is read from the account on every request: a demotion takes effect at once.
      if (admin && caller.role !== "admin") throw new AppError("forbidden", "This needs an administrator's token.");
      return { caller, token };
    };
    return tryChain(
      () => authenticator.authenticate(authorization, verifier),
      accept,
      (error) => refused(request, authorization, body, error, verifier),
    );
  };
}

export function bearer(authenticator: Authenticator, options: BearerOptions = {}) {
  const identify = identifier(authenticator, options);
  // derive, not resolve: the token is checked before the body's fields are, so a stranger learns nothing.
  return new Elysia({ name: options.admin ? "svc/bearer-admin" : "svc/bearer" })
    .use(requestFacts)
    .use(authenticator.plugin)
    .derive({ as: "scoped" }, ({ request, body, requestInfo, accessToken }) =>
      identify(request, body, requestInfo, accessToken),
    );
}
