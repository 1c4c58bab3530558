// /svc-api/v1/auth: login (username or e-mail and password in, a session's token pair out), refresh,
// logout, and the caller's sessions.
import { Elysia, t } from "elysia";
import { clientInfo } from "../http/client-address.ts";
import type { RequestInfo } from "../http/request-context.ts";
import { requestFacts } from "../http/request-pipeline.ts";
import { bySession, type Idempotency, type KeyHolder } from "../http/idempotency.ts";
import { jsonBody, optionalJsonBody } from "../http/json-body.ts";
import { ref } from "../http/openapi.ts";
import { operations } from "../http/operations.ts";
import type { UserRecord } from "../db/store.ts";
import { loginBody, redeemAnyResetBody, userView } from "../users/model.ts";
import type { UserService } from "../users/service.ts";
import type { Authenticator } from "./authenticator.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { bearer, identifier } from "./bearer.ts";
import {
  clearRefreshCookie,
  cookieRefreshToken,
  requireCookieOrigin,
  type SessionMode,
  withRefreshInCookie,
} from "./cookie-session.ts";
import { type LogoutScope, logoutBody, logoutRequest, refreshBody, refreshRequest } from "./model.ts";
import { refreshDigest } from "./refresh-tokens.ts";
import type { SessionService, TokenPair } from "./sessions.ts";
import type { TokenVerifier, VerifiedToken } from "./tokens.ts";

/** What a request that starts a session can be refused with, besides its own credentials' error. */
const NEW_SESSION_ERRORS = [
  "validation_failed",
  "malformed_json",
  "account_disabled",
  "csrf_refused",
  "too_many_requests",
  "payload_too_large",
  "unsupported_media_type",
] as const;

/** The session a logout ends, as the request names it, and whose the request's Idempotency-Key is. */
type Ending = { scope: LogoutScope; holder: KeyHolder } & (
  | { by: "refresh token" | "cookie"; refreshToken: string }
  | { by: "bearer"; caller: UserRecord; token: VerifiedToken }
);

const COOKIE_DOC =
  "Cookie mode only: the session cookie (__Host-svc_refresh over HTTPS, svc_refresh over plain HTTP), HttpOnly, SameSite=Strict, holding the new refresh token.";

export interface AuthRouteDeps {
  users: UserService;
  sessions: SessionService;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
  /** SVC_CORS_ORIGINS: besides svc's own, the origins that may use the session cookie. */
  corsOrigins: readonly string[];
}

export function authRoutes({
  users,
  sessions,
  authenticator,
  idempotency,
  maxBodyBytes,
  trustProxy,
  corsOrigins,
}: AuthRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  const identify = identifier(authenticator, { idempotency });
  const origins = new Set(corsOrigins);
  const cookieOrigin = (request: Request) => requireCookieOrigin(request, origins, trustProxy);
  /** A new session's pair as its mode answers it: in cookie mode the refresh token goes to the cookie. */
  const answered = <T extends TokenPair>(
    pair: T,
    mode: SessionMode | undefined,
    request: Request,
    headers: Record<string, string | number>,
  ) => (mode === "cookie" ? withRefreshInCookie(pair, request, trustProxy, headers) : pair);

  /** The session a logout ends: named by the refresh token in its body, by the session cookie, or by the Bearer token. */
  async function sessionToEnd(
    body: unknown,
    request: Request,
    info: RequestInfo,
    verifier: TokenVerifier,
  ): Promise<Ending> {
    const { scope, refreshToken } = logoutRequest(body);
    // By refresh token, the session is named without an access token: one that expired can still sign out.
    // A repeat finds the token spent, so the key is held under its digest, not under a user.
    if (refreshToken !== undefined) {
      return { by: "refresh token", scope, refreshToken, holder: { caller: `refresh:${refreshDigest(refreshToken)}` } };
    }
    // By the session cookie, when nothing else names a session: its answer clears the cookie.
    const cookie = request.headers.has("authorization") ? undefined : cookieRefreshToken(request, trustProxy);
    if (cookie !== undefined) {
      cookieOrigin(request);
      return { by: "cookie", scope, refreshToken: cookie, holder: { caller: `refresh:${refreshDigest(cookie)}` } };
    }
    // By Bearer token, the key is the session's own: another session's repeat ends its own session.
    const { caller, token } = await identify(request, body, info, verifier);
    return { by: "bearer", scope, caller, token, holder: bySession(caller, token) };
  }

  return (
    new Elysia({ prefix: "/svc-api/v1/auth" })
      .use(requestFacts)
      .use(authenticator.plugin)
      // Every write here acts on something with no representation a client could hold a tag of (a new
      // session, a token, an account's password): "guarded" without a target, so If-Match cannot hold and
      // If-None-Match always does (RFC 9110).
      .use(operations({ idempotency, trustProxy }))
      .macro({
        /** `ending`: the session a logout ends; listed before the route's operation, whose key it names. */
        endingSession: {
          async resolve({ body, request, requestInfo, accessToken }) {
            const ending = await sessionToEnd(body, request, requestInfo, accessToken);
            return { ending, keyHolder: ending.holder };
          },
        },
      })
      .post(
        "/login",
        async ({ body, requestInfo, request, set }) => {
          // A cookie is set only for a page that may use it: no login CSRF from another site.
          if (body.mode === "cookie") cookieOrigin(request);
          return answered(
            await users.login(body, clientInfo(request, trustProxy, requestInfo)),
            body.mode,
            request,
            set.headers,
          );
        },
        {
          parse: json,
          body: loginBody,
          operation: {
            operationId: "login",
            conditional: "guarded",
            summary: "Log in with username (or e-mail) and password: a new session",
            tag: "auth",
            ok: {
              status: 200,
              description:
                "An access token, its refresh token (in cookie mode: in the session cookie instead), and you",
              schema: ref("Login"),
              headers: { "Set-Cookie": COOKIE_DOC },
            },
            errors: ["invalid_credentials", ...NEW_SESSION_ERRORS],
          },
        },
      )
      .post(
        "/refresh",
        async ({ body, requestInfo, request, set }) => {
          const client = clientInfo(request, trustProxy, requestInfo);
          const { refreshToken } = refreshRequest(body);
          if (refreshToken !== undefined) {
            const { user, ...pair } = await sessions.refresh(refreshToken, client);
            return { ...pair, user: userView(user, user.id) };
          }
          const cookie = cookieRefreshToken(request, trustProxy);
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
            ok: {
              status: 200,
              description:
                "A new access token and refresh token (taken from the cookie: in the cookie again), and you. The same refresh token sent again within the reuse window gets this same pair.",
              schema: ref("Login"),
              headers: { "Set-Cookie": COOKIE_DOC },
            },
            errors: [
              "validation_failed",
              "malformed_json",
              "invalid_refresh_token",
              "refresh_token_reused",
              "csrf_refused",
              "too_many_requests",
              "payload_too_large",
              "unsupported_media_type",
            ],
          },
        },
      )
      .post(
        "/password-reset",
        async ({ body, requestInfo, request, set }) => {
          if (body.mode === "cookie") cookieOrigin(request);
          const answer = await users.redeemReset(body, clientInfo(request, trustProxy, requestInfo));
          return answered(answer, body.mode, request, set.headers);
        },
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
              status: 200,
              description: "As login: a new session's pair, and you",
              schema: ref("Login"),
              headers: { "Set-Cookie": COOKIE_DOC },
            },
            errors: ["invalid_reset_code", "invalid_mail_token", "mail_token_expired", ...NEW_SESSION_ERRORS],
          },
        },
      )
      .post(
        "/logout",
        async ({ ending, set, requestInfo, request }) => {
          const client = clientInfo(request, trustProxy, requestInfo);
          if (ending.by === "bearer") await sessions.logout(ending.caller, ending.token, ending.scope, client);
          else if (ending.by === "refresh token")
            await sessions.logoutByRefresh(ending.refreshToken, ending.scope, client);
          else {
            // Ending this session, the cookie is of no more use (and nor is one that ended long ago);
            // ending the others, it goes on.
            await sessions.logoutByRefresh(ending.refreshToken, ending.scope, client).catch((error: unknown) => {
              clearRefreshCookie(request, trustProxy, set.headers);
              throw error;
            });
            if (ending.scope !== "others") clearRefreshCookie(request, trustProxy, set.headers);
          }
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
            errors: [
              "validation_failed",
              "malformed_json",
              "invalid_refresh_token",
              "csrf_refused",
              "too_many_requests",
              "payload_too_large",
              "unsupported_media_type",
            ],
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
        async ({ params, caller, set, requestInfo, request }) => {
          await sessions.end(caller, params.id, clientInfo(request, trustProxy, requestInfo));
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
