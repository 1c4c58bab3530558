// Who may use /svc-api/v1/admin: administrators' tokens and, under SVC_ADMIN_MFA=required, only those of
// administrators with a second factor, from a session that has shown it. Every admin route module mounts
// `adminOnly` in place of a bearer check of its own, so that no admin route can miss the second one.
import { Elysia } from "elysia";
import type { Authenticator } from "../auth/authenticator.ts";
import { identifier } from "../auth/bearer.ts";
import type { VerifiedToken } from "../auth/tokens.ts";
import { hasFactor } from "../auth/mfa/step-up.ts";
import type { MfaStore, UserRecord } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import { chain } from "../lib/awaitable.ts";

/** What every admin route may refuse a token with, for its OpenAPI entry. */
export const ADMIN_REFUSALS = ["forbidden", "mfa_enrolment_required", "mfa_step_up_required"] as const;

export interface AdminGuard {
  authenticator: Authenticator;
  /** SVC_ADMIN_MFA. */
  policy: "optional" | "required";
  factors: Pick<MfaStore, "factors" | "sessionFactor">;
}

/**
 * When the policy asks for a second factor: throws mfa_enrolment_required for an administrator without one,
 * and mfa_step_up_required for a session that has not shown it (signed in with the password before the
 * factor was on, and never stepped up): a factor on the account proves nothing of a session that never used it.
 */
export async function requireFactor(
  { policy, factors }: Omit<AdminGuard, "authenticator">,
  caller: UserRecord,
  token: VerifiedToken,
) {
  if (policy !== "required") return;
  if (!hasFactor(await factors.factors(caller.id)))
    throw new AppError(
      "mfa_enrolment_required",
      "SVC_ADMIN_MFA=required: enrol a second factor (an authenticator app or a passkey, under /svc-api/v1/auth/mfa and /svc-api/v1/auth/passkeys) before using the admin routes.",
    );
  const session = token.sessionId === undefined ? null : await factors.sessionFactor(caller.id, token.sessionId);
  if (session?.mfaAt) return;
  throw new AppError(
    "mfa_step_up_required",
    "SVC_ADMIN_MFA=required: this session has shown no second factor. POST /svc-api/v1/auth/mfa/verify with your code (or passkey) first, or sign in again.",
  );
}

/** The routes registered after it get `caller` and `token`: an administrator's, with a factor when required. */
export function adminOnly(guard: AdminGuard) {
  const { authenticator, policy } = guard;
  const identify = identifier(authenticator, { admin: true });
  // derive, as bearer() does: refused before the body's fields are checked, so a stranger learns nothing.
  return new Elysia({ name: "svc/admin-only" })
    .use(requestFacts)
    .use(authenticator.plugin)
    .derive({ as: "scoped" }, ({ request, body, requestInfo, accessToken }) => {
      const identified = identify(request, body, requestInfo, accessToken);
      // Without the policy, a token known from memory is still let through in one synchronous call.
      if (policy !== "required") return identified;
      return chain(identified, async (found) => {
        await requireFactor(guard, found.caller, found.token);
        return found;
      });
    });
}
