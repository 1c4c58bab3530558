// /svc-api/v1/auth/passkeys: registering, listing, renaming and removing your passkeys (Bearer), and
// signing in with one alone (no token): thin adapters from HTTP to the passkey service.
import { Elysia, t } from "elysia";
import type { Authenticator } from "../authenticator.ts";
import { bearer } from "../bearer.ts";
import { pairAnswer, sessionCookies } from "../session-answer.ts";
import type { StepUpGuard } from "../mfa/contracts.ts";
import { clientInfo } from "../../http/client-address.ts";
import type { Idempotency } from "../../http/idempotency.ts";
import { BODY_ERRORS, jsonBody, optionalJsonBody } from "../../http/json-body.ts";
import { ref } from "../../http/openapi.ts";
import { operations } from "../../http/operations.ts";
import { requestFacts } from "../../http/request-pipeline.ts";
import { registerBody, renameBody, signInBody } from "./model.ts";
import type { PasskeyService } from "./service.ts";

export interface PasskeyRouteDeps {
  passkeys: PasskeyService;
  /**
   * What adding and removing a passkey are held to (a second factor shown lately, once the account has
   * one); null only where no second-factor code is wired yet, and then they need the Bearer alone.
   */
  stepUp: StepUpGuard | null;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
  /** SVC_CORS_ORIGINS: besides svc's own, the origins that may use the session cookie. */
  corsOrigins: readonly string[];
}

const passkeyId = t.Object({ id: t.String({ description: "A passkey's id (UUID)." }) });

export function passkeyRoutes({
  passkeys,
  stepUp,
  authenticator,
  idempotency,
  maxBodyBytes,
  trustProxy,
  corsOrigins,
}: PasskeyRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  const cookies = sessionCookies(trustProxy, corsOrigins);
  return (
    new Elysia({ prefix: "/svc-api/v1/auth/passkeys" })
      .use(requestFacts)
      .use(operations({ idempotency, trustProxy }))
      .resolve(({ request, requestInfo }) => ({ client: clientInfo(request, trustProxy, requestInfo) }))
      .post("/sign-in/options", ({ client }) => passkeys.signInOptions(client), {
        parse: optionalJsonBody(maxBodyBytes),
        operation: {
          operationId: "passkeySignInOptions",
          summary:
            "Options for signing in with a passkey alone (a discoverable credential: no username). Its challenge is good once, for 5 minutes. At most 30 a minute per client.",
          tag: "auth",
          ok: {
            status: 200,
            description: "Pass them to navigator.credentials.get (startAuthentication of @simplewebauthn/browser)",
            schema: ref("PasskeyRequestOptions"),
          },
          errors: [...BODY_ERRORS, "too_many_requests"],
        },
      })
      .post(
        "/sign-in",
        async ({ body, client, request, set }) => {
          // A cookie is set only for a page that may use it: no login CSRF from another site.
          if (body.mode === "cookie") cookies.cookieTarget(request);
          const pair = await passkeys.signIn(body.response, body.mode, client);
          return cookies.answered(pair, body.mode, request, set.headers);
        },
        {
          parse: json,
          body: signInBody,
          operation: {
            operationId: "passkeySignIn",
            conditional: "guarded",
            summary: "Sign in with a passkey's answer to the sign-in options: a new session, as a login",
            tag: "auth",
            ok: pairAnswer(
              "As login: an access token, its refresh token (in cookie mode: in the cookie instead), and you",
            ),
            errors: [
              ...BODY_ERRORS,
              "invalid_passkey",
              "account_disabled",
              "email_unverified",
              "csrf_refused",
              "cookie_cross_site",
              "too_many_requests",
            ],
          },
        },
      )
      .use(bearer(authenticator, { idempotency }))
      // A passkey signs in as a second factor: a stolen Bearer that could add its own would get past every
      // step-up. So with a factor on, adding one needs a factor shown (the first, on an account without, none).
      .post(
        "/options",
        async ({ caller, token }) => {
          if (stepUp) await stepUp.require(caller, token);
          return passkeys.registrationOptions(caller);
        },
        {
          parse: optionalJsonBody(maxBodyBytes),
          operation: {
            operationId: "passkeyRegistrationOptions",
            summary:
              "Options for making a passkey for your account (discoverable, not one you have). Its challenge is good once, for 5 minutes. With a second factor on, it needs a step-up.",
            tag: "auth",
            auth: true,
            ok: {
              status: 200,
              description: "Pass them to navigator.credentials.create (startRegistration of @simplewebauthn/browser)",
              schema: ref("PasskeyCreationOptions"),
            },
            errors: [...BODY_ERRORS, "mfa_step_up_required"],
          },
        },
      )
      .post(
        "",
        async ({ body, caller, token, client, set }) => {
          // Before the answer's challenge is taken: refused, the options stay good for a step-up and a retry.
          if (stepUp) await stepUp.require(caller, token);
          const added = await passkeys.register(caller, body.response, body.name, client);
          set.status = 201;
          return added;
        },
        {
          parse: json,
          body: registerBody,
          operation: {
            operationId: "addPasskey",
            conditional: "guarded",
            summary:
              "Register a passkey with the browser's answer to auth/passkeys/options. With a second factor on, it needs a step-up.",
            tag: "auth",
            auth: true,
            ok: { status: 201, description: "Added: the passkey", schema: ref("Passkey") },
            errors: [...BODY_ERRORS, "mfa_step_up_required", "passkey_registration_failed"],
          },
        },
      )
      .get("", ({ caller }) => passkeys.list(caller), {
        operation: {
          operationId: "listPasskeys",
          summary: "Your passkeys, oldest first",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "Your passkeys", schema: ref("PasskeyList") },
          errors: [],
        },
      })
      .patch("/:id", ({ params, body, caller, client }) => passkeys.rename(caller, params.id, body.name, client), {
        // Any text: an id that is not one names no passkey of yours, the same 404.
        params: passkeyId,
        parse: json,
        body: renameBody,
        operation: {
          operationId: "renamePasskey",
          conditional: "guarded",
          summary: "Rename one of your passkeys",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "Renamed: the passkey", schema: ref("Passkey") },
          errors: [...BODY_ERRORS, "not_found"],
        },
      })
      .delete(
        "/:id",
        async ({ params, caller, token, client, set }) => {
          if (stepUp) await stepUp.require(caller, token);
          await passkeys.remove(caller, params.id, client);
          set.status = 204;
        },
        {
          params: passkeyId,
          operation: {
            operationId: "removePasskey",
            conditional: "guarded",
            summary:
              "Remove one of your passkeys. With a second factor on, it needs a step-up (a second factor shown within 5 minutes).",
            tag: "auth",
            auth: true,
            ok: { status: 204, description: "Removed: it signs in no more" },
            errors: ["mfa_step_up_required", "not_found", "last_sign_in_method"],
          },
        },
      )
  );
}
