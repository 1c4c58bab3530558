// The /svc-api/v1/users routes: thin adapters from HTTP to the user service.
import { Elysia, t } from "elysia";
import type { Authenticator } from "../auth/authenticator.ts";
import { bearer } from "../auth/bearer.ts";
import type { UserRecord } from "../db/store.ts";
import { withRefreshInCookie } from "../auth/cookie-session.ts";
import { clientInfo } from "../http/client-address.ts";
import type { RequestInfo } from "../http/request-context.ts";
import { conditionalJson, taggedJson } from "../http/etag.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { jsonBody, BODY_ERRORS } from "../http/json-body.ts";
import { ref } from "../http/openapi.ts";
import { operations, type Target } from "../http/operations.ts";
import {
  changePasswordBody,
  createUserBody,
  listUsersQuery,
  updateSelfBody,
  userPageAnswer,
  userView,
} from "./model.ts";
import { userListPage } from "./list-page.ts";
import type { UserService } from "./service.ts";
import type { PageJson } from "./page-json.ts";
import type { SignupService } from "../signup/service.ts";
import type { EmailChanges } from "./email-changes.ts";
import type { StepUpGuard } from "../auth/mfa/contracts.ts";

const PREFIX = "/svc-api/v1/users";

/** The caller's own record, as GET users/me shows it: what their writes on themselves are held to. */
const yourself: Target<UserRecord> = {
  current: ({ caller }) => caller,
  shown: (user) => userView(user, user.id),
};

export interface UsersRouteDeps {
  users: UserService;
  /** With mail on, a change of address waits for the link mailed to the new address (email-changes.ts). */
  emailChanges: EmailChanges;
  signups: SignupService;
  authenticator: Authenticator;
  pageJson: PageJson;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
  /** With a second factor on, a password or e-mail change needs a recent one (auth/mfa/step-up.ts). */
  stepUp?: StepUpGuard;
}

export function usersRoutes({
  users,
  emailChanges,
  signups,
  authenticator,
  pageJson,
  idempotency,
  maxBodyBytes,
  trustProxy,
  stepUp,
}: UsersRouteDeps) {
  const json = jsonBody(maxBodyBytes);
  const [readJson, mediaType] = json;
  /**
   * users/create's body, read once the attempt is admitted: counted against the client's sign-up limit,
   * and refused while sign-up is closed, before anything of it is read or checked. So every attempt
   * counts, whatever its body, and a closed sign-up answers one way to all.
   */
  const admittedJson: typeof json = [
    async (context) => {
      // A parser's context is the route's: the pipeline's requestInfo is there (request-pipeline.ts).
      const { requestInfo } = context as typeof context & { requestInfo: RequestInfo };
      await signups.admit(clientInfo(context.request, trustProxy, requestInfo));
      return readJson(context);
    },
    mediaType,
  ];

  const listPage = userListPage(users, pageJson);

  return (
    new Elysia({ prefix: PREFIX })
      .use(operations<UserRecord>({ idempotency, trustProxy }))
      .post(
        "/create",
        async ({ body, set, requestInfo, request }) => {
          const user = await signups.signUp(body, clientInfo(request, trustProxy, requestInfo));
          set.status = 201;
          set.headers.location = `${PREFIX}/${user.id}`;
          return userView(user, user.id);
        },
        {
          parse: admittedJson,
          body: createUserBody,
          operation: {
            operationId: "createUser",
            // A new account has no representation yet: If-Match cannot hold.
            conditional: "guarded",
            idempotent: "client",
            summary:
              "Sign up: create your own account, as SVC_SIGNUP allows (open, by invitation, or closed). At most SVC_SIGNUP_CLIENT_MAX attempts per SVC_SIGNUP_CLIENT_WINDOW from one client, whatever their outcome.",
            tag: "users",
            ok: {
              status: 201,
              description: "Created: the new user, e-mail included",
              schema: ref("Me"),
              headers: { Location: "The user's URL" },
            },
            errors: [
              ...BODY_ERRORS,
              "signup_closed",
              "invitation_required",
              "invalid_invitation",
              "username_taken",
              "email_taken",
              "too_many_requests",
            ],
          },
        },
      )
      .use(bearer(authenticator, { idempotency }))
      .get("/all", ({ query, caller, set, request }) => listPage(request, query, caller, set), {
        // The query is read by parseUserList, so that the document can say what limit is: an integer.
        operation: {
          operationId: "listUsers",
          conditional: "read",
          summary: "List users, oldest first, a page at a time, forwards (after) or backwards (before)",
          tag: "users",
          query: listUsersQuery,
          auth: true,
          ok: userPageAnswer,
          errors: ["validation_failed"],
        },
      })
      .get("/me", ({ caller, request, set }) => conditionalJson(request, set, userView(caller, caller.id)), {
        operation: {
          operationId: "getMe",
          conditional: "read",
          summary: "Get yourself: the record the token belongs to, e-mail included",
          tag: "users",
          auth: true,
          ok: { status: 200, description: "You", schema: ref("Me") },
          errors: [],
        },
      })
      .get(
        "/:user_id",
        async ({ params, caller, request, set }) =>
          conditionalJson(request, set, userView(await users.get(params.user_id), caller.id)),
        {
          params: t.Object({ user_id: t.String({ description: "A user id (UUID)." }) }),
          operation: {
            operationId: "getUser",
            conditional: "read",
            summary: "Get one user (the e-mail only in your own record)",
            tag: "users",
            auth: true,
            ok: { status: 200, description: "The user", schema: ref("User") },
            errors: ["not_found"],
          },
        },
      )
      // "" rather than "/": one path with and without the slash, and the document lists it without.
      .put(
        "",
        async ({ body, caller, token, unchanged, set, request, requestInfo }) => {
          const ifUnchanged = unchanged !== undefined;
          const client = clientInfo(request, trustProxy, requestInfo);
          if (body.email !== undefined && body.email.trim().toLowerCase() !== caller.email)
            await stepUp?.require(caller, token);
          const pending = await emailChanges.update(caller, body, { ifUnchanged }, client);
          if (pending) {
            set.status = 202;
            return { pending_email: pending.pendingEmail, user: userView(pending.user, caller.id) };
          }
          return taggedJson(set, userView(await users.updateSelf(caller, body, { ifUnchanged }), caller.id));
        },
        {
          parse: json,
          body: updateSelfBody,
          operation: {
            operationId: "updateMe",
            // Preconditions on the record as GET users/me showed it; failed, 412 and nothing written.
            conditional: "write",
            target: yourself,
            idempotent: "user",
            summary:
              "Update yourself; changing the e-mail needs current_password, and while svc sends mail it waits for the link mailed to the new address",
            tag: "users",
            auth: true,
            ok: { status: 200, description: "You, updated", schema: ref("Me") },
            also: [
              {
                status: 202,
                description:
                  "Mail on and the e-mail changing: a link went to the new address; the other fields are changed already",
                schema: ref("PendingEmailChange"),
              },
            ],
            errors: [
              ...BODY_ERRORS,
              "current_password_mismatch",
              "mfa_step_up_required",
              "username_taken",
              "email_taken",
              "too_many_requests",
            ],
          },
        },
      )
      .put(
        "/password",
        async ({ body, caller, token, requestInfo, request, set }) => {
          await stepUp?.require(caller, token);
          const pair = await users.changePassword(caller, token, body, clientInfo(request, trustProxy, requestInfo));
          // A cookie session (its token says so) goes on in its cookie.
          return token.mode === "cookie" ? withRefreshInCookie(pair, request, trustProxy, set.headers) : pair;
        },
        {
          parse: json,
          body: changePasswordBody,
          operation: {
            operationId: "changePassword",
            conditional: "guarded",
            target: yourself,
            // The answer is a new token pair: this session's alone.
            idempotent: "session",
            summary:
              "Change your password; every earlier token and every other session stops working. An account without one (made through an OpenID provider) sets its first without current_password, within 5 minutes of signing in",
            tag: "users",
            auth: true,
            ok: {
              status: 200,
              description:
                "A fresh pair for this session; for a cookie-mode session, the refresh token in its cookie instead",
              schema: ref("TokenPair"),
              headers: { "Set-Cookie": "A cookie-mode session's new refresh token, in its session cookie." },
            },
            errors: [...BODY_ERRORS, "current_password_mismatch", "mfa_step_up_required", "recent_sign_in_required"],
          },
        },
      )
      .delete(
        "",
        async ({ caller, set, requestInfo, request }) => {
          await users.deleteSelf(caller, clientInfo(request, trustProxy, requestInfo));
          set.status = 204;
        },
        {
          operation: {
            operationId: "deleteMe",
            conditional: "guarded",
            target: yourself,
            idempotent: "user",
            summary: "Delete yourself; your categories stay, with no creator",
            tag: "users",
            auth: true,
            ok: { status: 204, description: "Deleted; your tokens stop working" },
            errors: ["last_admin"],
          },
        },
      )
  );
}
