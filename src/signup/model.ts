// Shapes of the invitation routes (t schemas for validation and the OpenAPI document), the views they
// answer with, and the page query they read.
import { t, type Static } from "elysia";
import type { InvitationPage, InvitationRecord } from "../db/store.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { integer, RULE_MESSAGE, type QueryParameter } from "../http/openapi.ts";
import { snakeView } from "../lib/snake-view.ts";
import { EMAIL, EMAIL_MAX, EMAIL_MESSAGE } from "../users/rules.ts";
import { parsePage } from "../users/service.ts";

const instant = t.String({ format: "date-time" });
const id = t.String({ format: "uuid" });
const orNull = <T extends Parameters<typeof t.Union>[0][number]>(schema: T, description: string) =>
  t.Union([schema, t.Null()], { description });

export const DURATION = /^\d{1,15}[smhd]?$/;
export const EXPIRES_IN_MESSAGE = "must be a duration such as 30m, 24h or 7d, from 1m to 365d";

export const issueInvitationBody = t.Object(
  {
    email: t.Optional(
      t.String({
        maxLength: EMAIL_MAX,
        pattern: EMAIL.source,
        [RULE_MESSAGE]: EMAIL_MESSAGE,
        description: "Only a sign-up with this e-mail address may redeem it (any case); left out, any address may.",
      }),
    ),
    expires_in: t.Optional(
      t.String({
        maxLength: 16,
        pattern: DURATION.source,
        [RULE_MESSAGE]: EXPIRES_IN_MESSAGE,
        description: "How long it stays redeemable: 30m, 24h, 7d (1m to 365d); left out, SVC_INVITATION_TTL (7d).",
      }),
    ),
  },
  { additionalProperties: false, description: "Both optional: an empty body, or none, issues one for anyone." },
);

export type IssueInvitationInput = Static<typeof issueInvitationBody>;

export const invitationSchema = t.Object({
  id,
  email: orNull(t.String(), "Only a sign-up with this e-mail address may redeem it; null: any address."),
  created_by: orNull(id, "The administrator who issued it; null: the CLI."),
  created_at: instant,
  expires_at: instant,
  used_at: orNull(instant, "When a sign-up redeemed it; null: not yet."),
  used_by: orNull(id, "The account that sign-up made."),
});

export const issuedInvitationSchema = t.Object({
  id,
  code: t.String({
    description:
      "Shown this once: hand it to whoever is to sign up, who sends it as invitation to users/create. It works once.",
  }),
  email: orNull(t.String(), "The e-mail address it is for; null: any."),
  expires_at: instant,
});

export type InvitationView = Static<typeof invitationSchema>;
export type IssuedInvitation = Static<typeof issuedInvitationSchema>;

// Its own list, not the store's columns (INVITATION_FIELDS): a column added to the store for its own use must not
// reach the answer unnoticed.
const invitationFields = snakeView(["id", "email", "createdBy", "createdAt", "expiresAt", "usedAt", "usedBy"]);

export function invitationView(invitation: InvitationRecord): InvitationView {
  return invitationFields(invitation);
}

export const invitationsQuery: QueryParameter[] = [
  { name: "limit", description: "Page size.", schema: integer({ minimum: 1, maximum: 1000, default: 100 }) },
  {
    name: "after",
    description: "Return invitations older than this one (from the Link header of the previous page).",
    schema: t.String({ format: "uuid" }),
  },
];

/** admin/invitations' query: the page (limit, after an invitation id), as users/all reads it; nothing else. */
export function parseInvitationPage(query: Record<string, string | undefined>): InvitationPage {
  try {
    const { limit, after } = parsePage(query);
    return after === undefined ? { limit } : { limit, before: after };
  } catch (error) {
    if (!(error instanceof AppError && error.errors)) throw error;
    throw invalidFields(
      error.errors.map((e) => (e.field === "after" ? { field: "after", message: "must be an invitation id" } : e)),
    );
  }
}
