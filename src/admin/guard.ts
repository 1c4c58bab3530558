// Who may use /svc-api/v1/admin: administrators' tokens and, under SVC_ADMIN_MFA=required, only those of
// administrators with a second factor. Every admin route module mounts `adminOnly` in place of a bearer
// check of its own, so that no admin route can miss the second one.
import { Elysia } from "elysia";
import type { Authenticator } from "../auth/authenticator.ts";
import { identifier } from "../auth/bearer.ts";
import type { MfaAdministration, UserRecord } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import { chain } from "../lib/awaitable.ts";

/** What every admin route may refuse a token with, for its OpenAPI entry. */
export const ADMIN_REFUSALS = ["forbidden", "mfa_enrolment_required"] as const;

export interface AdminGuard {
  authenticator: Authenticator;
  /** SVC_ADMIN_MFA. */
  policy: "optional" | "required";
  factors: Pick<MfaAdministration, "hasSecondFactor">;
}

/** Throws mfa_enrolment_required for an administrator without a second factor, when the policy asks for one. */
export async function requireFactor({ policy, factors }: Omit<AdminGuard, "authenticator">, caller: UserRecord) {
  if (policy !== "required" || (await factors.hasSecondFactor(caller.id))) return;
  throw new AppError(
    "mfa_enrolment_required",
    "SVC_ADMIN_MFA=required: enrol a second factor (an authenticator app or a passkey, under /svc-api/v1/auth/mfa and /svc-api/v1/auth/passkeys) before using the admin routes.",
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
        await requireFactor(guard, found.caller);
        return found;
      });
    });
}
