// /svc-api/v1/admin: account administration and the audit log, for administrators' tokens only (any
// other token gets 403 before anything else is read). Thin adapters from HTTP to the admin service.
import { Elysia, t } from "elysia";
import type { Authenticator } from "../auth/authenticator.ts";
import { bearer } from "../auth/bearer.ts";
import { clientInfo } from "../http/client-address.ts";
import { conditionalJson, hasPreconditions, requirePreconditions, taggedJson } from "../http/etag.ts";
import type { Idempotency } from "../http/idempotency.ts";
import type { UserRecord } from "../db/store.ts";
import { jsonBody } from "../http/json-body.ts";
import { documented, ref } from "../http/openapi.ts";
import {
  accountChangeBody,
  adminUsersQuery,
  adminUserView,
  auditEventView,
  auditQuery,
  newAccountBody,
  nextPageQuery,
  parseAuditFilter,
  parseUserFilter,
} from "./model.ts";
import type { AdminService } from "./service.ts";

const PREFIX = "/svc-api/v1/admin";

export interface AdminRouteDeps {
  admin: AdminService;
  authenticator: Authenticator;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

export function adminRoutes({ admin, authenticator, idempotency, maxBodyBytes, trustProxy }: AdminRouteDeps) {
  const userId = t.Object({ id: t.String({ description: "A user id (UUID)." }) });

  /** The account as GET admin/users/{id} shows it, when the write carries preconditions, which it met (else 412). */
  async function preconditioned(request: Request, id: string): Promise<UserRecord | undefined> {
    if (!hasPreconditions(request)) return undefined;
    const account = await admin.get(id);
    requirePreconditions(request, adminUserView(account));
    return account;
  }

  return new Elysia({ prefix: PREFIX })
    .use(bearer(authenticator, { admin: true }))
    .get(
      "/users",
      async ({ query, set, request }) => {
        const filter = parseUserFilter(query);
        // One extra row tells whether another page exists without a count query.
        const rows = await admin.list({ ...filter, limit: filter.limit + 1 });
        const page = rows.slice(0, filter.limit);
        if (rows.length > filter.limit)
          set.headers.link = `<${PREFIX}/users?${nextPageQuery(query, filter.limit, page.at(-1)!.id)}>; rel="next"`;
        return conditionalJson(request, set, page.map(adminUserView));
      },
      {
        detail: documented({
          operationId: "adminListUsers",
          conditional: "read",
          summary: "List accounts with their e-mail, role, status and last login, oldest first",
          tag: "admin",
          query: adminUsersQuery,
          auth: true,
          ok: {
            status: 200,
            description: "A page of accounts",
            schema: t.Array(ref("AdminUser")),
            headers: { Link: 'The next page, as <url>; rel="next", while more remain' },
          },
          errors: ["validation_failed", "forbidden"],
        }),
      },
    )
    .post(
      "/users",
      ({ body, caller, request, set }) =>
        idempotency.run({ request, set, body, caller: `user:${caller.id}` }, async () => {
          // A new account has no representation yet: If-Match cannot hold.
          requirePreconditions(request, null);
          const user = await admin.create(caller.id, body, clientInfo(request, trustProxy));
          set.status = 201;
          set.headers.location = `${PREFIX}/users/${user.id}`;
          return adminUserView(user);
        }),
      {
        parse: jsonBody(maxBodyBytes),
        body: newAccountBody,
        detail: documented({
          operationId: "adminCreateUser",
          conditional: "guarded",
          idempotent: true,
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
          errors: [
            "validation_failed",
            "malformed_json",
            "forbidden",
            "username_taken",
            "email_taken",
            "payload_too_large",
            "unsupported_media_type",
          ],
        }),
      },
    )
    .get(
      "/users/:id",
      async ({ params, request, set }) => conditionalJson(request, set, adminUserView(await admin.get(params.id))),
      {
        params: userId,
        detail: documented({
          operationId: "adminGetUser",
          conditional: "read",
          summary: "Get one account",
          tag: "admin",
          auth: true,
          ok: { status: 200, description: "The account", schema: ref("AdminUser") },
          errors: ["forbidden", "not_found"],
        }),
      },
    )
    .patch(
      "/users/:id",
      ({ params, body, caller, request, set }) =>
        idempotency.run({ request, set, body, caller: `user:${caller.id}` }, async () => {
          // Checked again within the write: of two writers holding one tag, one gets 412.
          const unchanged = await preconditioned(request, params.id);
          const client = clientInfo(request, trustProxy);
          return taggedJson(set, adminUserView(await admin.update(caller.id, params.id, body, client, unchanged)));
        }),
      {
        params: userId,
        parse: jsonBody(maxBodyBytes),
        body: accountChangeBody,
        detail: documented({
          operationId: "adminUpdateUser",
          conditional: "write",
          idempotent: true,
          summary:
            "Change an account's role or status (JSON or application/merge-patch+json). Disabling ends its sessions and tokens at once.",
          tag: "admin",
          auth: true,
          ok: { status: 200, description: "The account, changed", schema: ref("AdminUser") },
          errors: [
            "validation_failed",
            "malformed_json",
            "forbidden",
            "not_found",
            "last_admin",
            "payload_too_large",
            "unsupported_media_type",
          ],
        }),
      },
    )
    .delete(
      "/users/:id",
      ({ params, caller, request, set }) =>
        idempotency.run({ request, set, body: null, caller: `user:${caller.id}` }, async () => {
          await preconditioned(request, params.id);
          await admin.delete(caller.id, params.id, clientInfo(request, trustProxy));
          set.status = 204;
        }),
      {
        params: userId,
        detail: documented({
          operationId: "adminDeleteUser",
          conditional: "guarded",
          idempotent: true,
          summary: "Delete an account: its sessions end, its categories stay with no creator",
          tag: "admin",
          auth: true,
          ok: { status: 204, description: "Deleted" },
          errors: ["forbidden", "not_found", "last_admin"],
        }),
      },
    )
    .post(
      "/users/:id/password-reset",
      ({ params, caller, request, set }) =>
        idempotency.run({ request, set, body: null, caller: `user:${caller.id}` }, async () => {
          await preconditioned(request, params.id);
          const issued = await admin.issueReset(caller.id, params.id, clientInfo(request, trustProxy));
          set.status = 201;
          set.headers["cache-control"] = "no-store";
          return issued;
        }),
      {
        params: userId,
        detail: documented({
          operationId: "adminIssuePasswordReset",
          conditional: "guarded",
          idempotent: true,
          summary: "Issue a one-time password reset code for the account (it replaces any earlier one)",
          tag: "admin",
          auth: true,
          ok: { status: 201, description: "The code, shown once, and when it expires", schema: ref("IssuedReset") },
          errors: ["forbidden", "not_found"],
        }),
      },
    )
    .get(
      "/audit",
      async ({ query, set, request }) => {
        const filter = parseAuditFilter(query);
        const rows = await admin.events({ ...filter, limit: filter.limit + 1 });
        const page = rows.slice(0, filter.limit);
        if (rows.length > filter.limit)
          set.headers.link = `<${PREFIX}/audit?${nextPageQuery(query, filter.limit, page.at(-1)!.id)}>; rel="next"`;
        return conditionalJson(request, set, page.map(auditEventView));
      },
      {
        detail: documented({
          operationId: "adminListAudit",
          conditional: "read",
          summary: "The audit log, newest first",
          tag: "admin",
          query: auditQuery,
          auth: true,
          ok: {
            status: 200,
            description: "A page of events",
            schema: t.Array(ref("AuditEvent")),
            headers: { Link: 'The next (older) page, as <url>; rel="next", while more remain' },
          },
          errors: ["validation_failed", "forbidden"],
        }),
      },
    );
}
