// /svc-api/v1/admin/mail: the outbox for the console's Mail view (GET, newest first, never the bodies) and
// "send a failed mail again" (POST …/{id}/resend). Administrators' tokens only, as every admin route;
// 409 mail_not_configured while mail is off.
import { Elysia, t } from "elysia";
import { ADMIN_REFUSALS, adminOnly, type AdminGuard } from "../admin/guard.ts";
import type { MailOutboxStore } from "../db/mail-outbox.ts";
import { AppError } from "../errors/index.ts";
import type { Idempotency } from "../http/idempotency.ts";
import { pageAnswer, ref } from "../http/openapi.ts";
import { operations } from "../http/operations.ts";
import { listAnswer } from "../admin/paging.ts";
import { mailQuery, outboxMailView, parseMailFilter } from "./model.ts";

const PATH = "/svc-api/v1/admin/mail";

export interface MailRouteDeps {
  mail: MailOutboxStore;
  /** false: mail is off (production without SVC_SMTP_URL). */
  configured: boolean;
  adminGuard: AdminGuard;
  idempotency: Idempotency;
  trustProxy: number;
  now?: () => number;
}

export function adminMailRoutes({
  mail,
  configured,
  adminGuard,
  idempotency,
  trustProxy,
  now = Date.now,
}: MailRouteDeps) {
  const on = () => {
    if (!configured)
      throw new AppError("mail_not_configured", "Mail is off: set SVC_SMTP_URL and restart svc (docs/mail.md).");
  };
  return new Elysia()
    .use(operations({ idempotency, trustProxy }))
    .use(adminOnly(adminGuard))
    .get(
      PATH,
      (context) => {
        on();
        const filter = parseMailFilter(context.query);
        // The query holds nothing but the filter's parameters: parseMailFilter refuses any other.
        const page = { path: PATH, limit: filter.limit, cursor: "before" as const };
        return listAnswer(context, page, (limit) => mail.list({ ...filter, limit }), outboxMailView);
      },
      {
        operation: {
          operationId: "adminListMail",
          conditional: "read",
          summary: "The mail outbox, newest first: each mail's recipient, subject and state, never its body",
          tag: "admin",
          query: mailQuery,
          auth: true,
          ok: pageAnswer("A page of mails", "OutboxMail", true),
          errors: ["validation_failed", ...ADMIN_REFUSALS, "mail_not_configured"],
        },
      },
    )
    .post(
      `${PATH}/:id/resend`,
      async ({ params }) => {
        on();
        const outcome = await mail.resend(params.id, new Date(now()).toISOString());
        if (outcome === "missing") throw new AppError("not_found", "No mail has this id.");
        if (outcome === "not_failed")
          throw new AppError("mail_not_failed", "Only a failed mail can be resent; this one is pending or sent.");
        if (outcome === "carries_link")
          throw new AppError(
            "mail_not_resendable",
            "This mail carried a one-time link, which expired before the mail was given up on: the user asks for a new link (Forgot password, a new verification link, the change of address again).",
          );
        return outboxMailView(outcome);
      },
      {
        params: t.Object({ id: t.String({ description: "A mail id (UUID)." }) }),
        operation: {
          operationId: "adminResendMail",
          summary:
            "Send a failed notice again: pending, due now, with another day before it is given up on (a mail with a link cannot be: its token has expired)",
          tag: "admin",
          auth: true,
          ok: { status: 200, description: "The mail, pending again", schema: ref("OutboxMail") },
          errors: [...ADMIN_REFUSALS, "not_found", "mail_not_failed", "mail_not_resendable", "mail_not_configured"],
        },
      },
    );
}
