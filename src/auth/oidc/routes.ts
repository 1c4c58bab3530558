// /svc-api/v1/auth/oidc and /auth/identities: signing in through OpenID providers (the browser's start and
// callback, an app's code exchange) and the identities linked to one's account: thin adapters from HTTP to
// the OIDC service (docs/oidc.md).
import { Elysia, t } from "elysia";
import { clientInfo } from "../../http/client-address.ts";
import type { Idempotency } from "../../http/idempotency.ts";
import { BODY_ERRORS, jsonBody, optionalJsonBody } from "../../http/json-body.ts";
import { ref } from "../../http/openapi.ts";
import { operations } from "../../http/operations.ts";
import { requestFacts } from "../../http/request-pipeline.ts";
import { answeredId } from "../../http/request-context.ts";
import type { Authenticator } from "../authenticator.ts";
import { bearer } from "../bearer.ts";
import { cookieRefreshToken, withRefreshInCookie } from "../cookie-session.ts";
import { refreshDigest } from "../refresh-tokens.ts";
import type { SessionStore } from "../../db/store.ts";
import type { StepUpGuard } from "../mfa/contracts.ts";
import { pairAnswer } from "../session-answer.ts";
import { failurePage } from "./failure-page.ts";
import { flowCookie, sealedFlow } from "./flow-cookie.ts";
import { exchangeBody, identityView, linkBody, startQuery } from "./model.ts";
import type { OidcService } from "./service.ts";

export interface OidcRouteDeps {
  oidc: OidcService;
  /** Where a link's start finds whose session the browser holds. */
  sessions: Pick<SessionStore, "findRefresh">;
  stepUp: StepUpGuard | null;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

const PREFIX = "/svc-api/v1/auth";
const provider = t.Object({ provider: t.String({ description: "The provider's name in SVC_OIDC_PROVIDERS." }) });

/** A 303 to `location`, with each Set-Cookie given (Elysia's set.headers holds one value a name). */
function seeOther(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  for (const cookie of cookies) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

export function oidcRoutes({
  oidc,
  sessions,
  stepUp,
  authenticator,
  idempotency,
  maxBodyBytes,
  trustProxy,
}: OidcRouteDeps) {
  /** The user whose live svc session the request's cookie holds; null without one. */
  async function cookieUser(request: Request): Promise<string | null> {
    const refresh = cookieRefreshToken(request, trustProxy);
    const presented = refresh === undefined ? null : await sessions.findRefresh(refreshDigest(refresh));
    if (!presented || Date.parse(presented.session.expiresAt) <= Date.now()) return null;
    return presented.user.status === "active" ? presented.user.id : null;
  }
  return new Elysia({ prefix: PREFIX })
    .use(requestFacts)
    .use(operations({ idempotency, trustProxy }))
    .resolve(({ request, requestInfo }) => ({ client: clientInfo(request, trustProxy, requestInfo) }))
    .get(
      "/oidc",
      () => ({
        providers: oidc.offered().map(({ name, label }) => ({ name, label, url: `${PREFIX}/oidc/${name}` })),
      }),
      {
        operation: {
          operationId: "listOidcProviders",
          summary: "The OpenID providers one can sign in with, in the configured order (for sign-in buttons)",
          tag: "auth",
          ok: { status: 200, description: "The providers", schema: ref("OidcProviders") },
          errors: [],
        },
      },
    )
    .get(
      "/oidc/:provider",
      async ({ params, query, request }) => {
        const { url, sealed } = await oidc.start(params.provider, query, () => cookieUser(request));
        return seeOther(url.href, [flowCookie(request, trustProxy, sealed)]);
      },
      {
        params: provider,
        query: startQuery,
        operation: {
          operationId: "startOidcSignIn",
          summary:
            "Start signing in through a provider (a browser navigation): a 303 to the provider, with the flow's cookie (PKCE, state and nonce, 10 minutes)",
          tag: "auth",
          ok: { status: 303, description: "To the provider's sign-in" },
          errors: [
            "validation_failed",
            "invalid_return_to",
            "invalid_oidc_code",
            "not_found",
            "oidc_provider_unavailable",
            "csrf_refused",
          ],
        },
      },
    )
    .get(
      "/oidc/:provider/callback",
      async ({ params, request, client, requestInfo }) => {
        const ended = flowCookie(request, trustProxy, null);
        const outcome = await oidc.callback(
          params.provider,
          new URL(request.url).search,
          sealedFlow(request, trustProxy),
          client,
        );
        if (outcome.kind === "failed") {
          if (outcome.to) return seeOther(outcome.to, [ended]);
          const page = failurePage(outcome.code, outcome.back, answeredId(requestInfo));
          page.headers.append("set-cookie", ended);
          return page;
        }
        if (outcome.kind === "redirect") return seeOther(outcome.to, [ended]);
        const headers: Record<string, string | number> = {};
        withRefreshInCookie(outcome.answer, request, trustProxy, headers);
        return seeOther(outcome.to, [ended, String(headers["set-cookie"])]);
      },
      {
        params: provider,
        operation: {
          operationId: "oidcCallback",
          summary:
            "Where the provider sends the browser back: checked, then a 303 to return_to (signed in, with a code, or at the second step); a failure is a small page (or return_to with error=)",
          tag: "auth",
          ok: { status: 303, description: "To return_to" },
          errors: [],
        },
      },
    )
    .post("/oidc/exchange", ({ body, client }) => oidc.exchange(body.code, client), {
      parse: jsonBody(maxBodyBytes),
      body: exchangeBody,
      operation: {
        operationId: "exchangeOidcCode",
        summary: "Trade the one-time code a mode=code sign-in ended with for a session (once, within 60 seconds)",
        tag: "auth",
        ok: pairAnswer("As login: a session's pair and you, or the second step for an account with a second factor"),
        errors: [...BODY_ERRORS, "invalid_oidc_code", "account_disabled"],
      },
    })
    .use(bearer(authenticator, { idempotency }))
    .get("/identities", async ({ caller }) => ({ items: (await oidc.list(caller.id)).map(identityView) }), {
      operation: {
        operationId: "listIdentities",
        summary: "The identities at OpenID providers linked to your account, oldest first",
        tag: "auth",
        auth: true,
        ok: { status: 200, description: "Your identities", schema: ref("IdentityList") },
        errors: [],
      },
    })
    .post(
      "/identities/:provider",
      async ({ params, body, caller, token }) => {
        // Linking adds a way into the account: a stolen Bearer must not add its owner's own provider account.
        if (stepUp) await stepUp.require(caller, token);
        return { url: await oidc.linkTicket(caller.id, params.provider, body?.return_to) };
      },
      {
        params: provider,
        parse: optionalJsonBody(maxBodyBytes),
        body: t.Optional(linkBody),
        operation: {
          operationId: "startIdentityLink",
          summary:
            "Start linking a provider to your account: send the browser to the answer's url (svc's own, 5 minutes). With a second factor on, it needs a step-up.",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "Where to send the browser", schema: ref("OidcLinkStart") },
          errors: [
            ...BODY_ERRORS,
            "invalid_return_to",
            "not_found",
            "oidc_provider_unavailable",
            "mfa_step_up_required",
            "identity_taken",
          ],
        },
      },
    )
    .delete(
      "/identities/:provider",
      async ({ params, caller, token, client, set }) => {
        if (stepUp) await stepUp.require(caller, token);
        await oidc.unlink(caller.id, params.provider, client);
        set.status = 204;
      },
      {
        params: provider,
        operation: {
          operationId: "unlinkIdentity",
          conditional: "guarded",
          summary:
            "Unlink your identity at a provider; refused while it is your account's last way to sign in. With a second factor on, it needs a step-up.",
          tag: "auth",
          auth: true,
          ok: { status: 204, description: "Unlinked: it signs in no more" },
          errors: ["not_found", "last_sign_in_method", "mfa_step_up_required"],
        },
      },
    );
}
