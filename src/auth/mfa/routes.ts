// /svc-api/v1/auth/mfa: what a user sees of their second factors (docs/second-factors.md), the login's
// second step and the step-up. Thin adapters from HTTP to the second-factor service (service.ts).
import { Elysia, t } from "elysia";
import { clientInfo } from "../../http/client-address.ts";
import type { Idempotency } from "../../http/idempotency.ts";
import { BODY_ERRORS, jsonBody } from "../../http/json-body.ts";
import { ref } from "../../http/openapi.ts";
import { operations } from "../../http/operations.ts";
import { requestFacts } from "../../http/request-pipeline.ts";
import type { Authenticator } from "../authenticator.ts";
import { bearer, identifier } from "../bearer.ts";
import { pairAnswer, type SessionCookies } from "../session-answer.ts";
import { confirmTotpBody, removeTotpBody, verifyBody } from "./model.ts";
import type { SecondFactors } from "./service.ts";

export interface MfaRouteDeps {
  mfa: SecondFactors;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
  /** Who may use the session cookie, and how a session's pair is answered in it. */
  cookies: SessionCookies;
}

export function mfaRoutes({ mfa, authenticator, idempotency, maxBodyBytes, trustProxy, cookies }: MfaRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  const identify = identifier(authenticator, { idempotency });
  return (
    // Mounted by authRoutes (auth/index.ts), under its /svc-api/v1/auth.
    new Elysia({ prefix: "/mfa" })
      .use(requestFacts)
      .use(authenticator.plugin)
      .use(operations({ idempotency, trustProxy }))
      .resolve(({ request, requestInfo }) => ({ client: clientInfo(request, trustProxy, requestInfo) }))
      .post(
        "/verify",
        async ({ body, client, request, requestInfo, accessToken, set }) => {
          const { mfa_token } = body;
          if (mfa_token === undefined) {
            // A step-up: the Bearer's session shows a second factor now.
            const { caller, token } = await identify(request, body, requestInfo, accessToken);
            return mfa.stepUp(caller, token, body, client);
          }
          const { answer, mode } = await mfa.completeLogin({ ...body, mfa_token }, client, (wanted) => {
            // As the login that asked for it: a cookie only for a page that may use it.
            if (wanted === "cookie") cookies.cookieTarget(request);
          });
          return cookies.answered(answer, mode, request, set.headers);
        },
        {
          parse: json,
          body: verifyBody,
          operation: {
            operationId: "verifyMfa",
            conditional: "guarded",
            summary:
              "Show a second factor: with mfa_token, the login's second step (answered as a login); with a Bearer instead, a step-up for sensitive changes",
            tag: "auth",
            auth: "or-body",
            ok: {
              ...pairAnswer(
                "With mfa_token: a new session's pair (in cookie mode, its refresh token in the cookie) and you. With a Bearer: the step-up",
              ),
              schema: t.Union([ref("Login"), ref("StepUp")]),
            },
            errors: [
              ...BODY_ERRORS,
              "unauthorized",
              "invalid_mfa_code",
              "invalid_passkey",
              "invalid_mfa_token",
              "mfa_token_expired",
              "account_disabled",
              "csrf_refused",
              "cookie_cross_site",
              "mfa_not_enabled",
              "too_many_requests",
            ],
          },
        },
      )
      .use(bearer(authenticator, { idempotency }))
      .get("", ({ caller }) => mfa.status(caller), {
        operation: {
          operationId: "getMfa",
          summary: "Your second factors, and what a login's second step accepts",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "Your second factors", schema: ref("MfaStatus") },
          errors: [],
        },
      })
      .post(
        "/totp",
        async ({ caller, token, set }) => {
          const enrolment = await mfa.enrolTotp(caller, token);
          set.status = 201;
          return enrolment;
        },
        {
          operation: {
            operationId: "enrolTotp",
            conditional: "guarded",
            summary:
              "Start turning on an authenticator app: a secret, its otpauth:// URI and a QR code; confirm with its first code",
            tag: "auth",
            auth: true,
            ok: {
              status: 201,
              description: "An enrolment waiting for its first code (it replaces one waiting before)",
              schema: ref("TotpEnrolment"),
            },
            errors: ["mfa_already_enabled", "mfa_step_up_required"],
          },
        },
      )
      .post("/totp/confirm", ({ body, caller, token, client }) => mfa.confirmTotp(caller, token, body.code, client), {
        parse: json,
        body: confirmTotpBody,
        operation: {
          operationId: "confirmTotp",
          conditional: "guarded",
          summary: "Turn the authenticator app on with its first code: ten recovery codes, shown this once",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "On; keep these recovery codes safe", schema: ref("RecoveryCodes") },
          errors: [...BODY_ERRORS, "invalid_mfa_code", "mfa_not_enabled", "mfa_step_up_required"],
        },
      })
      .delete(
        "/totp",
        async ({ body, caller, token, client, set }) => {
          await mfa.removeTotp(caller, token, body, client);
          set.status = 204;
        },
        {
          parse: json,
          body: removeTotpBody,
          operation: {
            operationId: "removeTotp",
            conditional: "guarded",
            summary:
              "Turn the authenticator app off, with a current code, or with your password and a step-up; with no passkey left, the recovery codes go too",
            tag: "auth",
            auth: true,
            ok: { status: 204, description: "Off" },
            errors: [
              ...BODY_ERRORS,
              "invalid_mfa_code",
              "current_password_mismatch",
              "mfa_step_up_required",
              "mfa_not_enabled",
              "too_many_requests",
            ],
          },
        },
      )
      .post("/recovery-codes", ({ caller, token, client }) => mfa.renewRecoveryCodes(caller, token, client), {
        operation: {
          operationId: "renewRecoveryCodes",
          conditional: "guarded",
          summary: "Ten new recovery codes (needs a step-up); the old ones stop working",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "The new codes, shown this once", schema: ref("RecoveryCodes") },
          errors: ["mfa_step_up_required", "mfa_not_enabled"],
        },
      })
      .post("/webauthn/options", ({ caller, token }) => mfa.stepUpOptions(caller, token), {
        operation: {
          operationId: "stepUpWebauthnOptions",
          conditional: "guarded",
          summary: "The WebAuthn options for a step-up with one of your passkeys (then auth/mfa/verify with webauthn)",
          tag: "auth",
          auth: true,
          ok: {
            status: 200,
            description: "PublicKeyCredentialRequestOptionsJSON, for navigator.credentials.get",
            schema: ref("MfaWebauthnOptions"),
          },
          errors: ["mfa_not_enabled"],
        },
      })
  );
}
