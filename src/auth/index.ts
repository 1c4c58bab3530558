// /svc-api/v1/auth: login (username or e-mail and password in, a session's token pair out), refresh,
// logout, and the caller's sessions.
import { Elysia, t } from "elysia";
import { clientInfo } from "../http/client-address.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { jsonBody, optionalJsonBody, BODY_ERRORS } from "../http/json-body.ts";
import { ref } from "../http/openapi.ts";
import { operations } from "../http/operations.ts";
import { loginBody, redeemAnyResetBody, userView } from "../users/model.ts";
import type { UserService } from "../users/service.ts";
import type { Authenticator } from "./authenticator.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { bearer } from "./bearer.ts";
import type { SignInAnswer } from "../users/second-step.ts";
import { clearRefreshCookie, cookieRefreshToken, type SessionMode, withRefreshInCookie } from "./cookie-session.ts";
import { logoutBody, refreshBody, refreshRequest } from "./model.ts";
import { pairAnswer, sessionCookies } from "./session-answer.ts";
import { endSessions, sessionEnding } from "./session-ending.ts";
import type { SessionService } from "./sessions.ts";
import { mfaRoutes } from "./mfa/routes.ts";
import type { SecondFactors } from "./mfa/service.ts";

/** What a request that starts a session can be refused with, besides its own credentials' error. */
const NEW_SESSION_ERRORS = [
  ...BODY_ERRORS,
  "account_disabled",
  "csrf_refused",
  "cookie_cross_site",
  "too_many_requests",
] as const;

export interface AuthRouteDeps {
  users: UserService;
  sessions: SessionService;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
  /** SVC_CORS_ORIGINS: besides svc's own, the origins that may use the session cookie. */
  corsOrigins: readonly string[];
  /** Second factors: auth/mfa/* and the login's second step (docs/second-factors.md). */
  mfa: SecondFactors;
}

export function authRoutes({
  users,
  sessions,
  authenticator,
  idempotency,
  maxBodyBytes,
  trustProxy,
  corsOrigins,
  mfa,
}: AuthRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  const cookies = sessionCookies(trustProxy, corsOrigins);
  const { cookieOrigin } = cookies;
  /** A sign-in by a secret (a password, a reset): its second step if the account has one, else the session. */
  const signedIn = async (
    mode: SessionMode | undefined,
    request: Request,
    headers: Record<string, string | number>,
    signIn: () => Promise<SignInAnswer>,
  ) => {
    // A cookie is set only for a page that may use it (no login CSRF) and whose browser will keep it.
    if (mode === "cookie") cookies.cookieTarget(request);
    const answer = await signIn();
    // A second factor to show first: no tokens and no cookie until auth/mfa/verify.
    if ("mfa_required" in answer) return answer;
    return cookies.answered(answer, mode, request, headers);
  };

  return (
    new Elysia({ prefix: "/svc-api/v1/auth" })
      .use(requestFacts)
      .use(authenticator.plugin)
      // Every write here acts on something with no representation a client could hold a tag of (a new
      // session, a token, an account's password): "guarded" without a target, so If-Match cannot hold and
      // If-None-Match always does (RFC 9110).
      .use(operations({ idempotency, trustProxy }))
      .use(sessionEnding({ authenticator, idempotency, trustProxy, cookieOrigin }))
      .use(mfaRoutes({ mfa, authenticator, idempotency, maxBodyBytes, trustProxy, cookies }))
      // Where the request came from, as sessions, the throttle and the audit log record it.
      .resolve(({ request, requestInfo }) => ({ client: clientInfo(request, trustProxy, requestInfo) }))
      .post(
        "/login",
        ({ body, client, request, set }) => signedIn(body.mode, request, set.headers, () => users.login(body, client)),
        {
          parse: json,
          body: loginBody,
          operation: {
            operationId: "login",
            conditional: "guarded",
            summary: "Log in with username (or e-mail) and password: a new session",
            tag: "auth",
            ok: {
              ...pairAnswer(
                "An access token, its refresh token (in cookie mode: in the session cookie instead), and you; for an account with a second factor, instead its second step (mfa_required), for auth/mfa/verify",
              ),
              schema: t.Union([ref("Login"), ref("MfaChallenge")]),
            },
            errors: ["invalid_credentials", ...NEW_SESSION_ERRORS],
          },
        },
      )
      .post(
        "/refresh",
        async ({ body, client, request, set }) => {
          const { refreshToken, cookieMode } = refreshRequest(body);
          if (refreshToken !== undefined) {
            const { user, ...pair } = await sessions.refresh(refreshToken, client);
            return { ...pair, user: userView(user, user.id) };
          }
          const cookie = cookieRefreshToken(request, trustProxy);
          if (cookie === undefined && cookieMode) {
            // A signed-out page asking whether it has a session: an answer, not an error in its console.
            set.status = 204;
            return;
          }
          if (cookie === undefined) {
            throw invalidFields([
              { field: "refresh_token", message: "is required, unless the session cookie is sent" },
            ]);
          }
          cookieOrigin(request);
          const { user, ...pair } = await sessions.refresh(cookie, client, "cookie").catch((error: unknown) => {
            // A cookie that can never work again is dropped, so the page knows to show its sign-in.
            if (error instanceof AppError && error.status === 401) clearRefreshCookie(request, trustProxy, set.headers);
            throw error;
          });
          return { ...withRefreshInCookie(pair, request, trustProxy, set.headers), user: userView(user, user.id) };
        },
        {
          parse: optionalJsonBody(maxBodyBytes),
          operation: {
            body: { schema: refreshBody, required: false },
            operationId: "refresh",
            conditional: "guarded",
            summary: "Trade a refresh token for a new pair (the refresh token is rotated)",
            tag: "auth",
            ok: pairAnswer(
              "A new access token and refresh token (taken from the cookie: in the cookie again), and you. The same refresh token sent again within the reuse window gets this same pair.",
            ),
            also: [
              { status: 204, description: "mode cookie, and no session cookie sent: there is no session (signed out)" },
            ],
            errors: [
              ...BODY_ERRORS,
              "invalid_refresh_token",
              "refresh_token_reused",
              "csrf_refused",
              "too_many_requests",
            ],
          },
        },
      )
      .post(
        "/password-reset",
        // An account with a second factor: the password is set, and its second step comes before any session.
        ({ body, client, request, set }) =>
          signedIn(body.mode, request, set.headers, () => users.redeemReset(body, client)),
        {
          parse: json,
          body: redeemAnyResetBody,
          operation: {
            operationId: "redeemPasswordReset",
            conditional: "guarded",
            summary:
              "Set a new password with the one-time code an administrator issued, or the token of a mailed reset link: every earlier session ends, and a new one starts",
            tag: "auth",
            ok: {
              ...pairAnswer(
                "As login: a new session's pair, and you; for an account with a second factor, its second step (mfa_required) instead, for auth/mfa/verify",
              ),
              schema: t.Union([ref("Login"), ref("MfaChallenge")]),
            },
            errors: ["invalid_reset_code", "invalid_mail_token", "mail_token_expired", ...NEW_SESSION_ERRORS],
          },
        },
      )
      .post(
        "/logout",
        async ({ ending, set, client, request }) => {
          await endSessions(sessions, ending, client, () => clearRefreshCookie(request, trustProxy, set.headers));
          set.status = 204;
        },
        {
          parse: optionalJsonBody(maxBodyBytes),
          endingSession: true,
          operation: {
            body: { schema: logoutBody, required: false },
            operationId: "logout",
            conditional: "guarded",
            idempotent: "resolved",
            summary:
              "Log out: end this session (or the others, or all) at once; named by the Bearer token, or by the session's refresh token in the body",
            tag: "auth",
            auth: "or-body",
            ok: {
              status: 204,
              description: "Ended: their access and refresh tokens stop working",
              headers: { "Set-Cookie": "By the session cookie: the cookie, cleared (Max-Age=0)." },
            },
            errors: [...BODY_ERRORS, "invalid_refresh_token", "csrf_refused", "too_many_requests"],
          },
        },
      )
      .use(bearer(authenticator, { idempotency }))
      .get("/sessions", ({ caller, token }) => sessions.list(caller, token), {
        operation: {
          operationId: "listSessions",
          summary: "Your live sessions, newest first",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "Your sessions; current marks this one", schema: t.Array(ref("Session")) },
          errors: [],
        },
      })
      .delete(
        "/sessions/:id",
        async ({ params, caller, set, client }) => {
          await sessions.end(caller, params.id, client);
          set.status = 204;
        },
        {
          // Any text: an id that is not one names no session of yours, the same 404.
          params: t.Object({ id: t.String({ description: "A session id (UUID)." }) }),
          operation: {
            operationId: "endSession",
            conditional: "guarded",
            summary: "End one of your sessions",
            tag: "auth",
            auth: true,
            ok: { status: 204, description: "Ended: its access and refresh tokens stop working" },
            errors: ["not_found"],
          },
        },
      )
  );
}
