// /svc-api/v1/admin: account administration and the audit log, for administrators' tokens only (any
// other token gets 403 before anything else is read). Thin adapters from HTTP to the admin service.
import { Elysia, t } from "elysia";
import { ADMIN_REFUSALS, adminOnly, type AdminGuard } from "./guard.ts";
import { clientInfo } from "../http/client-address.ts";
import { conditionalJson, taggedJson } from "../http/etag.ts";
import type { Idempotency } from "../http/idempotency.ts";
import type { UserRecord } from "../db/store.ts";
import { jsonBody, BODY_ERRORS } from "../http/json-body.ts";
import { pageAnswer, ref } from "../http/openapi.ts";
import { operations, type Target } from "../http/operations.ts";
import {
  accountChangeBody,
  adminUsersQuery,
  adminUserView,
  auditEventView,
  auditQuery,
  newAccountBody,
  parseAuditFilter,
  parseUserFilter,
} from "./model.ts";
import { listAnswer } from "./paging.ts";
import type { AdminService } from "./service.ts";

const PREFIX = "/svc-api/v1/admin";

export interface AdminRouteDeps {
  admin: AdminService;
  adminGuard: AdminGuard;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

export function adminRoutes({ admin, adminGuard, idempotency, maxBodyBytes, trustProxy }: AdminRouteDeps) {
  const userId = t.Object({ id: t.String({ description: "A user id (UUID)." }) });

  /** The account as GET admin/users/{id} shows it: what a write on it is held to. */
  const account: Target<UserRecord> = {
    current: ({ params }) => admin.get(params.id!),
    shown: adminUserView,
  };

  return new Elysia({ prefix: PREFIX })
    .use(operations<UserRecord>({ idempotency, trustProxy }))
    .use(adminOnly(adminGuard))
    .get(
      "/users",
      (context) => {
        const filter = parseUserFilter(context.query);
        const page = { path: `${PREFIX}/users`, limit: filter.limit };
        return listAnswer(context, page, (limit) => admin.list({ ...filter, limit }), adminUserView);
      },
      {
        operation: {
          operationId: "adminListUsers",
          conditional: "read",
          summary: "List accounts with their e-mail, role, status and last login, oldest first",
          tag: "admin",
          query: adminUsersQuery,
          auth: true,
          ok: pageAnswer("A page of accounts", "AdminUser"),
          errors: ["validation_failed", ...ADMIN_REFUSALS],
        },
      },
    )
    .post(
      "/users",
      async ({ body, caller, requestInfo, request, set }) => {
        const user = await admin.create(caller.id, body, clientInfo(request, trustProxy, requestInfo));
        set.status = 201;
        set.headers.location = `${PREFIX}/users/${user.id}`;
        return adminUserView(user);
      },
      {
        parse: jsonBody(maxBodyBytes),
        body: newAccountBody,
        operation: {
          operationId: "adminCreateUser",
          // A new account has no representation yet: If-Match cannot hold.
          conditional: "guarded",
          idempotent: "user",
          summary:
            "Create an account of either role, whatever SVC_SIGNUP says, under sign-up's rules (not its per-client limit)",
          tag: "admin",
          auth: true,
          ok: {
            status: 201,
            description: "Created: the account",
            schema: ref("AdminUser"),
            headers: { Location: "The account's URL under admin/users" },
          },
          errors: [...BODY_ERRORS, ...ADMIN_REFUSALS, "username_taken", "email_taken"],
        },
      },
    )
    .get(
      "/users/:id",
      async ({ params, request, set }) => conditionalJson(request, set, adminUserView(await admin.get(params.id))),
      {
        params: userId,
        operation: {
          operationId: "adminGetUser",
          conditional: "read",
          summary: "Get one account",
          tag: "admin",
          auth: true,
          ok: { status: 200, description: "The account", schema: ref("AdminUser") },
          errors: [...ADMIN_REFUSALS, "not_found"],
        },
      },
    )
    .patch(
      "/users/:id",
      async ({ params, body, caller, unchanged, requestInfo, request, set }) => {
        // Checked again within the write: of two writers holding one tag, one gets 412.
        const client = clientInfo(request, trustProxy, requestInfo);
        return taggedJson(set, adminUserView(await admin.update(caller.id, params.id, body, client, unchanged)));
      },
      {
        params: userId,
        parse: jsonBody(maxBodyBytes),
        body: accountChangeBody,
        operation: {
          operationId: "adminUpdateUser",
          conditional: "write",
          target: account,
          idempotent: "user",
          summary:
            "Change an account's role or status (JSON or application/merge-patch+json). Disabling ends its sessions and tokens at once.",
          tag: "admin",
          auth: true,
          ok: { status: 200, description: "The account, changed", schema: ref("AdminUser") },
          errors: [...BODY_ERRORS, ...ADMIN_REFUSALS, "not_found", "last_admin"],
        },
      },
    )
    .delete(
      "/users/:id",
      async ({ params, caller, requestInfo, request, set }) => {
        await admin.delete(caller.id, params.id, clientInfo(request, trustProxy, requestInfo));
        set.status = 204;
      },
      {
        params: userId,
        operation: {
          operationId: "adminDeleteUser",
          conditional: "guarded",
          target: account,
          idempotent: "user",
          summary: "Delete an account: its sessions end, its categories stay with no creator",
          tag: "admin",
          auth: true,
          ok: { status: 204, description: "Deleted" },
          errors: [...ADMIN_REFUSALS, "not_found", "last_admin"],
        },
      },
    )
    .post(
      "/users/:id/password-reset",
      async ({ params, caller, requestInfo, request, set }) => {
        const issued = await admin.issueReset(caller.id, params.id, clientInfo(request, trustProxy, requestInfo));
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return issued;
      },
      {
        params: userId,
        operation: {
          operationId: "adminIssuePasswordReset",
          conditional: "guarded",
          target: account,
          idempotent: "user",
          summary: "Issue a one-time password reset code for the account (it replaces any earlier one)",
          tag: "admin",
          auth: true,
          ok: { status: 201, description: "The code, shown once, and when it expires", schema: ref("IssuedReset") },
          errors: [...ADMIN_REFUSALS, "not_found"],
        },
      },
    )
    .post(
      "/users/:id/email-verified",
      async ({ params, caller, requestInfo, request, set }) => {
        const client = clientInfo(request, trustProxy, requestInfo);
        return taggedJson(set, adminUserView(await admin.markEmailVerified(caller.id, params.id, client)));
      },
      {
        params: userId,
        operation: {
          operationId: "adminMarkEmailVerified",
          conditional: "guarded",
          target: account,
          idempotent: "user",
          summary:
            "Mark the account's e-mail address verified on your word (its outstanding verification links stop working); one verified already stays as it was",
          tag: "admin",
          auth: true,
          ok: { status: 200, description: "The account, verified", schema: ref("AdminUser") },
          errors: [...ADMIN_REFUSALS, "not_found"],
        },
      },
    )
    .delete(
      "/users/:id/mfa",
      async ({ params, caller, requestInfo, request, set }) => {
        await admin.resetFactors(caller.id, params.id, clientInfo(request, trustProxy, requestInfo));
        set.status = 204;
      },
      {
        params: userId,
        operation: {
          operationId: "adminResetSecondFactors",
          conditional: "guarded",
          target: account,
          idempotent: "user",
          summary:
            "Clear the account's second factors (authenticator app, recovery codes, passkeys, second steps under way), audited as mfa.reset: the way back in after a lost phone",
          tag: "admin",
          auth: true,
          ok: { status: 204, description: "Cleared (an account without factors answers the same)" },
          errors: [...ADMIN_REFUSALS, "not_found"],
        },
      },
    )
    .get(
      "/audit",
      (context) => {
        const filter = parseAuditFilter(context.query);
        const page = { path: `${PREFIX}/audit`, limit: filter.limit };
        return listAnswer(context, page, (limit) => admin.events({ ...filter, limit }), auditEventView);
      },
      {
        operation: {
          operationId: "adminListAudit",
          conditional: "read",
          summary: "The audit log, newest first",
          tag: "admin",
          query: auditQuery,
          auth: true,
          ok: pageAnswer("A page of events", "AuditEvent", true),
          errors: ["validation_failed", ...ADMIN_REFUSALS],
        },
      },
    );
}
