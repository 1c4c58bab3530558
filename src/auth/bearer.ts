// The Elysia side of authentication: routes registered after `.use(bearer(...))` get `caller` and its `token`.
import { Elysia } from "elysia";
import { AppError } from "../errors.ts";
import { Replayed, type Idempotency } from "../http/idempotency.ts";
import { requestInfo } from "../http/request-context.ts";
import type { Authenticator } from "./authenticator.ts";

export interface BearerOptions {
  /** Only administrators' tokens; any other gets 403. */
  admin?: boolean;
  /** A repeat under an Idempotency-Key whose first request revoked the token gets that request's answer. */
  idempotency?: Idempotency;
}

export function bearer(authenticator: Authenticator, { admin = false, idempotency }: BearerOptions = {}) {
  // derive, not resolve: the token is checked before the body's fields are, so a stranger learns nothing.
  return new Elysia({ name: admin ? "svc/bearer-admin" : "svc/bearer" }).derive(
    { as: "scoped" },
    async ({ request, body }) => {
      const authorization = request.headers.get("authorization");
      const { user: caller, token } = await authenticator.authenticate(authorization).catch(async (error: unknown) => {
        // A password change, logout or deletion whose answer was lost: its retry carries the very
        // token it revoked. Only a repeat of that request (same key, same body) gets its answer back.
        const subject = idempotency && error instanceof AppError && (await authenticator.subject(authorization));
        const replay = subject && (await idempotency.replayFor(subject, request, body ?? null));
        if (replay) throw new Replayed(replay);
        throw error;
      });
      const info = requestInfo(request);
      if (info) info.userId = caller.id;
      // The role is read from the account on every request: a demotion takes effect at once.
      if (admin && caller.role !== "admin") throw new AppError("forbidden", "This needs an administrator's token.");
      return { caller, token };
    },
  );
}
