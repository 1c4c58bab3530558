// The shapes of /svc-api/v1/admin/mail (the schema OutboxMail for the OpenAPI document), its query, and the
// view the routes answer with: a mail's envelope and state, never its bodies (they hold one-time tokens).
import { t, type Static } from "elysia";
import type { OutboxFilter, OutboxRecord } from "../db/mail-outbox.ts";
import { type FieldError, invalidFields, UNKNOWN_FIELD } from "../errors/index.ts";
import { enumOf, integer, type QueryParameter } from "../http/openapi.ts";
import { parseId } from "../lib/ids.ts";
import { snakeView } from "../lib/snake-view.ts";

const instant = t.String({ format: "date-time" });
const STATUSES = ["pending", "sent", "failed"] as const;
const KINDS = ["verify_email", "password_reset", "password_changed", "email_change", "email_changed"] as const;

export const outboxMailSchema = t.Object({
  id: t.String({ format: "uuid" }),
  kind: enumOf(KINDS, { description: "Which mail: the template it was rendered from." }),
  recipient: t.String(),
  user_id: t.Union([t.String({ format: "uuid" }), t.Null()], { description: "The account it is about." }),
  subject: t.String(),
  status: enumOf(STATUSES, {
    description: "pending: waiting to be sent (or retried); sent: the SMTP server took it; failed: given up on.",
  }),
  attempts: integer({ description: "Attempts made so far." }),
  created_at: t.String({
    format: "date-time",
    description: "When it was written (or resent): it is given up on a day later.",
  }),
  next_attempt_at: t.String({ format: "date-time", description: "When a pending mail is next tried." }),
  sent_at: t.Union([instant, t.Null()]),
  last_error: t.Union([t.String(), t.Null()], { description: "What the last failed attempt was told, in one line." }),
});

export type OutboxMailView = Static<typeof outboxMailSchema>;

const outboxFields = snakeView([
  "id",
  "kind",
  "recipient",
  "userId",
  "subject",
  "status",
  "attempts",
  "createdAt",
  "nextAttemptAt",
  "sentAt",
  "lastError",
]);

export function outboxMailView(mail: OutboxRecord): OutboxMailView {
  return outboxFields(mail);
}

export const mailQuery: QueryParameter[] = [
  { name: "status", description: "Only mails in this state.", schema: enumOf(STATUSES) },
  {
    name: "before",
    description: "Only mails older than this mail id (the Link header's next page).",
    schema: t.String({ format: "uuid" }),
  },
  { name: "limit", description: "Page size.", schema: integer({ minimum: 1, maximum: 1000, default: 100 }) },
];

/** The filter the query asks for; 400 validation_failed naming each bad parameter. */
export function parseMailFilter(query: Record<string, string | undefined>): OutboxFilter {
  const problems: FieldError[] = [];
  const filter: OutboxFilter = { limit: 100 };
  for (const [field, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (field === "status") {
      if ((STATUSES as readonly string[]).includes(value)) filter.status = value as OutboxFilter["status"];
      else problems.push({ field, message: `must be one of ${STATUSES.join(", ")}` });
    } else if (field === "before") {
      const id = parseId(value);
      if (id) filter.before = id;
      else problems.push({ field, message: "must be a mail id" });
    } else if (field === "limit") {
      const limit = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
      if (limit >= 1 && limit <= 1000) filter.limit = limit;
      else problems.push({ field, message: "must be an integer from 1 to 1000" });
    } else problems.push({ field, message: UNKNOWN_FIELD });
  }
  if (problems.length > 0) throw invalidFields(problems);
  return filter;
}
