// /svc-api/v1/auth/email/verify: the token from a verification mail's link redeemed (the page svc serves
// at the link POSTs it here), and a new link asked for: by the signed-in account, or, while
// SVC_EMAIL_VERIFICATION=required (an unverified account cannot sign in), by its address alone.
import { Elysia, t } from "elysia";
import { invalidFields } from "../errors/index.ts";
import { clientInfo } from "../http/client-address.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { jsonBody, optionalJsonBody, BODY_ERRORS } from "../http/json-body.ts";
import { ref, RULE_MESSAGE } from "../http/openapi.ts";
import { operations } from "../http/operations.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import { userView } from "../users/model.ts";
import { EMAIL, EMAIL_MAX } from "../users/rules.ts";
import type { Authenticator } from "./authenticator.ts";
import { identifier } from "./bearer.ts";
import { LINK_TOKEN_PATTERN } from "../users/link-tokens.ts";
import type { EmailVerifier } from "./email-verifier.ts";

const closed = { additionalProperties: false } as const;

export const verifyEmailBody = t.Object(
  {
    token: t.String({
      pattern: LINK_TOKEN_PATTERN,
      [RULE_MESSAGE]: "must be the token from the mail's link (43 characters of base64url)",
      description: "The token in the fragment of the mail's link (#token=…).",
    }),
  },
  closed,
);

/** For the document: the body is read by resendRequest. */
export const resendBody = t.Object(
  {
    email: t.Optional(
      t.String({
        maxLength: EMAIL_MAX,
        description:
          "Without a Bearer token, while SVC_EMAIL_VERIFICATION=required: the account's address. The answer is the same whether or not there is one.",
      }),
    ),
  },
  closed,
);

/** The one answer a resend gets, whatever happened, so that it tells nobody which addresses have accounts. */
export const resendSchema = t.Object(
  { detail: t.String() },
  { description: "Accepted: a new link is on its way, if there is an unverified account to send it to." },
);
const RESENT = {
  detail:
    "If the account exists and its address is not verified yet, a new link is on its way; earlier ones stop working.",
};

/** A resend's body as an object of known fields; throws validation_failed for any other. */
function resendFields(body: unknown): { email?: unknown } {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalidFields([{ field: "body", message: "must be a JSON object" }]);
  const extra = Object.keys(body).filter((key) => key !== "email");
  if (extra.length > 0) throw invalidFields(extra.map((field) => ({ field, message: "is not a known field" })));
  return body;
}

/** The address a resend without a token names; throws validation_failed for anything else. */
function resendAddress(body: unknown): string {
  const { email } = resendFields(body);
  if (typeof email !== "string" || email.length > EMAIL_MAX || !EMAIL.test(email))
    throw invalidFields([{ field: "email", message: "is required without a Bearer token: your account's address" }]);
  return email;
}

export interface EmailVerificationRouteDeps {
  verifier: EmailVerifier;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

export function emailVerificationRoutes({
  verifier,
  authenticator,
  idempotency,
  maxBodyBytes,
  trustProxy,
}: EmailVerificationRouteDeps) {
  const identify = identifier(authenticator, { idempotency });
  return new Elysia({ prefix: "/svc-api/v1/auth/email" })
    .use(requestFacts)
    .use(authenticator.plugin)
    .use(operations({ idempotency, trustProxy }))
    .post(
      "/verify",
      async ({ body, requestInfo, request }) => {
        const user = await verifier.verify(body.token, clientInfo(request, trustProxy, requestInfo));
        return userView(user, user.id);
      },
      {
        parse: jsonBody(maxBodyBytes),
        body: verifyEmailBody,
        operation: {
          operationId: "verifyEmail",
          conditional: "guarded",
          summary: "Verify your e-mail address with the token from the mail's link (it works once, for 24 hours)",
          tag: "auth",
          ok: { status: 200, description: "Verified: you, with email_verified true", schema: ref("Me") },
          errors: [...BODY_ERRORS, "invalid_mail_token", "mail_token_expired"],
        },
      },
    )
    .post(
      "/verify/resend",
      async ({ body, requestInfo, request, accessToken, set }) => {
        const client = clientInfo(request, trustProxy, requestInfo);
        // Whoever asks, with or without a token: nothing to verify, and the answer says so.
        verifier.refuseWhenOff();
        // Without a token, only while an unverified account cannot sign in to ask with one.
        if (request.headers.has("authorization") || verifier.mode !== "required") {
          const { caller } = await identify(request, body, requestInfo, accessToken);
          if (resendFields(body).email !== undefined)
            throw invalidFields([{ field: "email", message: "is taken only without a Bearer token" }]);
          await verifier.resend(caller, client);
        } else {
          await verifier.resendTo(resendAddress(body), client);
        }
        set.status = 202;
        set.headers["cache-control"] = "no-store";
        return RESENT;
      },
      {
        parse: optionalJsonBody(maxBodyBytes),
        operation: {
          body: { schema: resendBody, required: false },
          operationId: "resendVerification",
          conditional: "guarded",
          summary:
            "Mail a new verification link (earlier ones stop working): to you, by your Bearer token; or, while SVC_EMAIL_VERIFICATION=required, to the account with the address in the body. At most one a minute and five an hour per account or address.",
          tag: "auth",
          auth: "or-body",
          ok: { status: 202, description: "Accepted, the same whatever happened", schema: ref("VerificationResend") },
          errors: [...BODY_ERRORS, "mail_not_configured", "email_verification_off", "too_many_requests"],
        },
      },
    );
}
