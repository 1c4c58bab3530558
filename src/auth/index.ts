// /svc-api/v1/auth: login (username or e-mail and password in, a session's token pair out), refresh,
// logout, and the caller's sessions.
import { Elysia, t } from "elysia";
import { clientInfo } from "../http/client-address.ts";
import { bySession, type Idempotency, type IdempotentRequest } from "../http/idempotency.ts";
import { requirePreconditions } from "../http/etag.ts";
import { jsonBody, optionalJsonBody } from "../http/json-body.ts";
import { documented } from "../http/openapi.ts";
import { loginBody, loginSchema, redeemResetBody, userView } from "../users/model.ts";
import type { UserService } from "../users/service.ts";
import type { Authenticator } from "./authenticator.ts";
import { bearer, identifier } from "./bearer.ts";
import { logoutBody, logoutRequest, refreshBody, sessionSchema } from "./model.ts";
import { refreshDigest } from "./refresh-tokens.ts";
import type { SessionService } from "./sessions.ts";

export interface AuthRouteDeps {
  users: UserService;
  sessions: SessionService;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

export function authRoutes({ users, sessions, authenticator, idempotency, maxBodyBytes, trustProxy }: AuthRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  const identify = identifier(authenticator, { idempotency });
  return (
    new Elysia({ prefix: "/svc-api/v1/auth" })
      // Every write here acts on something with no representation a client could hold a tag of (a new
      // session, a token, an account's password): If-Match cannot hold, If-None-Match always does (RFC 9110).
      .onBeforeHandle(({ request }) => {
        if (request.method !== "GET") requirePreconditions(request, null);
      })
      .post("/login", ({ body, request }) => users.login(body, clientInfo(request, trustProxy)), {
        parse: json,
        body: loginBody,
        detail: documented({
          operationId: "login",
          conditional: "guarded",
          summary: "Log in with username (or e-mail) and password: a new session",
          tag: "auth",
          ok: { status: 200, description: "An access token, its refresh token, and you", schema: loginSchema },
          errors: [
            "validation_failed",
            "malformed_json",
            "invalid_credentials",
            "account_disabled",
            "too_many_requests",
            "payload_too_large",
            "unsupported_media_type",
          ],
        }),
      })
      .post(
        "/refresh",
        async ({ body, request }) => {
          const { user, ...pair } = await sessions.refresh(body.refresh_token, clientInfo(request, trustProxy));
          return { ...pair, user: userView(user, user.id) };
        },
        {
          parse: json,
          body: refreshBody,
          detail: documented({
            operationId: "refresh",
            conditional: "guarded",
            summary: "Trade a refresh token for a new pair (the refresh token is rotated)",
            tag: "auth",
            ok: {
              status: 200,
              description:
                "A new access token and refresh token, and you. The same refresh token sent again within the reuse window gets this same pair.",
              schema: loginSchema,
            },
            errors: [
              "validation_failed",
              "malformed_json",
              "invalid_refresh_token",
              "refresh_token_reused",
              "too_many_requests",
              "payload_too_large",
              "unsupported_media_type",
            ],
          }),
        },
      )
      .post("/password-reset", ({ body, request }) => users.redeemReset(body, clientInfo(request, trustProxy)), {
        parse: json,
        body: redeemResetBody,
        detail: documented({
          operationId: "redeemPasswordReset",
          conditional: "guarded",
          summary:
            "Set a new password with the one-time code an administrator issued: every earlier session ends, and a new one starts",
          tag: "auth",
          ok: { status: 200, description: "As login: a new session's pair, and you", schema: loginSchema },
          errors: [
            "validation_failed",
            "malformed_json",
            "invalid_reset_code",
            "account_disabled",
            "too_many_requests",
            "payload_too_large",
            "unsupported_media_type",
          ],
        }),
      })
      .post(
        "/logout",
        async ({ body, set, request }) => {
          const { scope, refreshToken } = logoutRequest(body);
          const client = clientInfo(request, trustProxy);
          const run = (key: Pick<IdempotentRequest, "caller" | "session" | "perSession">, work: () => Promise<void>) =>
            idempotency.run({ request, set, body: body ?? null, ...key }, async () => {
              await work();
              set.status = 204;
            });
          // By refresh token, the session is named without an access token: one that expired can still sign out.
          // A repeat finds the token spent, so the key is held under its digest, not under a user.
          if (refreshToken !== undefined) {
            return run({ caller: `refresh:${refreshDigest(refreshToken)}` }, () =>
              sessions.logoutByRefresh(refreshToken, scope, client),
            );
          }
          // By Bearer token, the key is the session's own: another session's repeat ends its own session.
          const { caller, token } = await identify(request, body);
          return run(bySession(caller, token), () => sessions.logout(caller, token, scope, client));
        },
        {
          parse: optionalJsonBody(maxBodyBytes),
          detail: documented({
            body: { schema: logoutBody, required: false },
            operationId: "logout",
            conditional: "guarded",
            idempotent: true,
            summary:
              "Log out: end this session (or the others, or all) at once; named by the Bearer token, or by the session's refresh token in the body",
            tag: "auth",
            auth: "or-body",
            ok: { status: 204, description: "Ended: their access and refresh tokens stop working" },
            errors: [
              "validation_failed",
              "malformed_json",
              "invalid_refresh_token",
              "too_many_requests",
              "payload_too_large",
              "unsupported_media_type",
            ],
          }),
        },
      )
      .use(bearer(authenticator, { idempotency }))
      .get("/sessions", ({ caller, token }) => sessions.list(caller, token), {
        detail: documented({
          operationId: "listSessions",
          summary: "Your live sessions, newest first",
          tag: "auth",
          auth: true,
          ok: { status: 200, description: "Your sessions; current marks this one", schema: t.Array(sessionSchema) },
          errors: [],
        }),
      })
      .delete(
        "/sessions/:id",
        async ({ params, caller, set, request }) => {
          await sessions.end(caller, params.id, clientInfo(request, trustProxy));
          set.status = 204;
        },
        {
          // Any text: an id that is not one names no session of yours, the same 404.
          params: t.Object({ id: t.String({ description: "A session id (UUID)." }) }),
          detail: documented({
            operationId: "endSession",
            conditional: "guarded",
            summary: "End one of your sessions",
            tag: "auth",
            auth: true,
            ok: { status: 204, description: "Ended: its access and refresh tokens stop working" },
            errors: ["not_found"],
          }),
        },
      )
  );
}
