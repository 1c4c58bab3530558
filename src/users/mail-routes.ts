// The routes of resets and e-mail changes by mail: asking for a reset link, and confirming a change of
// address. Redeeming a reset link is auth/password-reset's (auth/index.ts), beside reset codes.
import { Elysia } from "elysia";
import { clientInfo } from "../http/client-address.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { jsonBody, BODY_ERRORS } from "../http/json-body.ts";
import { ref } from "../http/openapi.ts";
import { operations } from "../http/operations.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import type { EmailChanges } from "./email-changes.ts";
import type { UserService } from "./service.ts";
import { confirmChangeBody, RESET_REQUESTED, resetRequestBody } from "./mail-model.ts";
import { userView } from "./model.ts";

export interface MailRouteDeps {
  users: Pick<UserService, "requestPasswordReset">;
  emailChanges: EmailChanges;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

export function accountMailRoutes({ users, emailChanges, idempotency, maxBodyBytes, trustProxy }: MailRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  return new Elysia({ prefix: "/svc-api/v1/auth" })
    .use(requestFacts)
    .use(operations({ idempotency, trustProxy }))
    .post(
      "/password-reset/request",
      async ({ body, request, requestInfo, set }) => {
        await users.requestPasswordReset(body.email, clientInfo(request, trustProxy, requestInfo));
        set.status = 202;
        return RESET_REQUESTED;
      },
      {
        parse: json,
        body: resetRequestBody,
        operation: {
          operationId: "requestPasswordReset",
          conditional: "guarded",
          summary:
            "Ask for a password reset link by mail. The answer is the same whether or not an account has the address; throttled per address and per client.",
          tag: "auth",
          ok: { status: 202, description: "Accepted, for every address", schema: ref("ResetRequested") },
          errors: [...BODY_ERRORS, "mail_not_configured", "too_many_requests"],
        },
      },
    )
    .post(
      "/email/confirm-change",
      async ({ body, request, requestInfo }) => {
        const user = await emailChanges.confirm(body.token, clientInfo(request, trustProxy, requestInfo));
        return userView(user, user.id);
      },
      {
        parse: json,
        body: confirmChangeBody,
        operation: {
          operationId: "confirmEmailChange",
          conditional: "guarded",
          summary: "Confirm a change of address with the token of the link mailed to the new address",
          tag: "users",
          ok: { status: 200, description: "The account, with its new (verified) address", schema: ref("Me") },
          errors: [...BODY_ERRORS, "invalid_mail_token", "mail_token_expired", "email_taken", "account_disabled"],
        },
      },
    );
}
