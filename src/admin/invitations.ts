// /svc-api/v1/admin/invitations: issue, list and revoke the invitation codes sign-up takes while
// SVC_SIGNUP=invite (issued in any mode, to be ready before the switch). Administrators' tokens only, as
// every admin route; thin adapters from HTTP to the invitation service.
import { Elysia, t } from "elysia";
import { ADMIN_REFUSALS, adminOnly, type AdminGuard } from "./guard.ts";
import { clientInfo } from "../http/client-address.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { optionalJsonBody, BODY_ERRORS } from "../http/json-body.ts";
import { pageAnswer, ref } from "../http/openapi.ts";
import { operations } from "../http/operations.ts";
import type { InvitationService } from "../signup/invitations.ts";
import { invitationsQuery, invitationView, issueInvitationBody, parseInvitationPage } from "../signup/model.ts";
import { listAnswer } from "./paging.ts";

const PREFIX = "/svc-api/v1/admin/invitations";

export interface InvitationRouteDeps {
  invitations: InvitationService;
  adminGuard: AdminGuard;
  idempotency: Idempotency;
  maxBodyBytes: number;
  trustProxy: number;
}

export function invitationRoutes({
  invitations,
  adminGuard,
  idempotency,
  maxBodyBytes,
  trustProxy,
}: InvitationRouteDeps) {
  return (
    new Elysia({ prefix: PREFIX })
      .use(operations({ idempotency, trustProxy }))
      .use(adminOnly(adminGuard))
      // "" rather than "/": one path with and without the slash, and the document lists it without.
      .post(
        "",
        async ({ body, caller, requestInfo, request, set }) => {
          const issued = await invitations.issue(caller.id, body, clientInfo(request, trustProxy, requestInfo));
          set.status = 201;
          set.headers["cache-control"] = "no-store";
          return issued;
        },
        {
          parse: optionalJsonBody(maxBodyBytes),
          body: issueInvitationBody,
          operation: {
            operationId: "adminIssueInvitation",
            conditional: "guarded",
            idempotent: "user",
            summary: "Issue a one-time invitation code for signing up while SVC_SIGNUP=invite",
            tag: "admin",
            auth: true,
            ok: {
              status: 201,
              description: "The code, shown once, its id and when it expires",
              schema: ref("IssuedInvitation"),
            },
            errors: [...BODY_ERRORS, ...ADMIN_REFUSALS],
          },
        },
      )
      .get(
        "",
        (context) => {
          const filter = parseInvitationPage(context.query);
          const page = { path: PREFIX, limit: filter.limit };
          return listAnswer(context, page, (limit) => invitations.list({ ...filter, limit }), invitationView);
        },
        {
          operation: {
            operationId: "adminListInvitations",
            conditional: "read",
            summary: "List invitations, newest first, without their codes: who issued each, and who redeemed it",
            tag: "admin",
            query: invitationsQuery,
            auth: true,
            ok: pageAnswer("A page of invitations", "Invitation", true),
            errors: ["validation_failed", ...ADMIN_REFUSALS],
          },
        },
      )
      .delete(
        "/:id",
        async ({ params, caller, requestInfo, request, set }) => {
          await invitations.revoke(caller.id, params.id, clientInfo(request, trustProxy, requestInfo));
          set.status = 204;
        },
        {
          params: t.Object({ id: t.String({ description: "An invitation id (UUID)." }) }),
          operation: {
            operationId: "adminRevokeInvitation",
            idempotent: "user",
            summary: "Revoke an invitation: its code stops working (a redeemed one just leaves the list)",
            tag: "admin",
            auth: true,
            ok: { status: 204, description: "Revoked" },
            errors: [...ADMIN_REFUSALS, "not_found"],
          },
        },
      )
  );
}
