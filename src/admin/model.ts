// Shapes of the admin routes (t schemas for validation and the OpenAPI document), the views they
// answer with, and the query strings they read.
import { t, type Static } from "elysia";
import { AUDIT_ACTIONS, isAuditAction } from "../audit/model.ts";
import { parseDuration } from "../config/index.ts";
import {
  ACCOUNT_STATUSES,
  ROLES,
  type AccountStatus,
  type AuditEvent,
  type AuditFilter,
  type Role,
  type UserFilter,
  type UserRecord,
} from "../db/store.ts";
import { invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import { snakeView } from "../lib/snake-view.ts";
import { enumOf, integer, type QueryParameter } from "../http/openapi.ts";
import { accountFields } from "../users/model.ts";
import { parsePage } from "../users/service.ts";

const role = enumOf(["user", "admin"]);
const status = enumOf(["active", "disabled"], {
  description: "A disabled account cannot log in; disabling it ends its sessions and tokens.",
});
const instant = t.String({ format: "date-time" });

export const adminUserSchema = t.Object({
  id: t.String({ format: "uuid" }),
  username: t.String(),
  email: t.String(),
  email_verified: t.Boolean({
    description: "Whether the address was shown to be the user's (a mailed link, or an administrator).",
  }),
  email_verified_at: t.Union([instant, t.Null()], { description: "When the address was verified; null: not yet." }),
  role,
  status,
  last_login_at: t.Union([instant, t.Null()], { description: "The last login or redeemed reset code; null: never." }),
  created_at: instant,
  updated_at: instant,
});

export const newAccountBody = t.Object(
  {
    ...accountFields,
    role: t.Optional(role),
    email_verified: t.Optional(
      t.Boolean({
        description:
          "true: you vouch for the address; it counts as verified and no verification mail is sent. Left out: false.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "A sign-up's fields, held to the same rules, and a role (user when left out).",
  },
);

export const accountChangeBody = t.Object(
  { role: t.Optional(role), status: t.Optional(status) },
  { additionalProperties: false, description: "Any of role and status; fields left out stay as they are." },
);

export const issuedResetSchema = t.Object({
  reset_code: t.String({ description: "Shown this once: hand it to the user, who redeems it at auth/password-reset." }),
  expires_at: instant,
});

export const auditEventSchema = t.Object({
  id: t.String({ format: "uuid" }),
  at: instant,
  action: enumOf(AUDIT_ACTIONS),
  actor_id: t.Union([t.String({ format: "uuid" }), t.Null()], {
    description: "Who acted; null: nobody signed in, or the CLI.",
  }),
  target_id: t.Union([t.String({ format: "uuid" }), t.Null()], { description: "The user (or category) acted on." }),
  client_address: t.Union([t.String(), t.Null()], { description: "The client's address, or cli." }),
  request_id: t.Union([t.String(), t.Null()], {
    description: "svc's own id of the request, as in its log lines (never the client's); null for the CLI.",
  }),
  outcome: enumOf(["success", "failure"]),
  detail: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], {
    description: "Particulars; never a secret. client_request_id: the X-Request-Id the client sent, if any.",
  }),
});

export type AdminUserView = Static<typeof adminUserSchema>;
export type AuditEventView = Static<typeof auditEventSchema>;

const identity = snakeView(["id", "username", "email"]);
const standing = snakeView(["emailVerifiedAt", "role", "status", "lastLoginAt", "createdAt", "updatedAt"]);
const auditFields = snakeView(["id", "at", "action", "actorId", "targetId", "clientAddress", "requestId", "outcome"]);

export function adminUserView(user: UserRecord): AdminUserView {
  return { ...identity(user), email_verified: user.emailVerifiedAt !== null, ...standing(user) };
}

export function auditEventView(event: AuditEvent): AuditEventView {
  const detail = event.detail === null ? null : (JSON.parse(event.detail) as Record<string, unknown>);
  return { ...auditFields(event), detail };
}

const SEARCH_MAX = 254;

const page = (description: string): QueryParameter[] => [
  { name: "limit", description: "Page size.", schema: integer({ minimum: 1, maximum: 1000, default: 100 }) },
  { name: "after", description, schema: t.String({ format: "uuid" }) },
];

export const adminUsersQuery: QueryParameter[] = [
  {
    name: "search",
    description: "A prefix of the username or e-mail, without regard to case.",
    schema: t.String({ maxLength: SEARCH_MAX }),
  },
  { name: "status", description: "Only accounts with this status.", schema: status },
  { name: "role", description: "Only accounts with this role.", schema: role },
  ...page("Return users after this id (from the Link header of the previous page)."),
];

export const auditQuery: QueryParameter[] = [
  { name: "action", description: "Only this action.", schema: enumOf(AUDIT_ACTIONS) },
  { name: "actor", description: "Only events this user did.", schema: t.String({ format: "uuid" }) },
  { name: "target", description: "Only events done to this user (or category).", schema: t.String({ format: "uuid" }) },
  {
    name: "user",
    description: "Only events this user did or that were done to them.",
    schema: t.String({ format: "uuid" }),
  },
  {
    name: "since",
    description: "Only events at or after this: an ISO-8601 date-time, or a duration back from now (30m, 24h, 7d).",
    schema: t.String(),
  },
  ...page("Return events older than this event id (from the Link header of the previous page)."),
];

/** Refuses every parameter not named, and splits the page parameters from the rest. */
function split(query: Record<string, string | undefined>, known: string[]) {
  const unknown = Object.keys(query).filter((name) => !known.includes(name) && name !== "limit" && name !== "after");
  if (unknown.length > 0) throw invalidFields(unknown.map((field) => ({ field, message: UNKNOWN_FIELD })));
  const { limit, after, ...rest } = query;
  const paging: Record<string, string> = {};
  if (limit !== undefined) paging.limit = limit;
  if (after !== undefined) paging.after = after;
  return { paging, rest };
}

function oneOf<T extends string>(
  values: readonly T[],
  value: string | undefined,
  field: string,
  problems: FieldError[],
) {
  if (value === undefined) return undefined;
  if ((values as readonly string[]).includes(value)) return value as T;
  problems.push({ field, message: `must be one of ${values.join(", ")}` });
  return undefined;
}

/** admin/users' query: search, status, role, and the page (limit, after) as users/all reads it. */
export function parseUserFilter(query: Record<string, string | undefined>): UserFilter {
  const { paging, rest } = split(query, ["search", "status", "role"]);
  const problems: FieldError[] = [];
  if (rest.search !== undefined && rest.search.length > SEARCH_MAX)
    problems.push({ field: "search", message: `must be at most ${SEARCH_MAX} characters` });
  const filter: UserFilter = {
    ...pageOrProblems(paging, problems),
    ...(rest.search && { search: rest.search }),
  };
  const wanted = {
    status: oneOf<AccountStatus>(ACCOUNT_STATUSES, rest.status, "status", problems),
    role: oneOf<Role>(ROLES, rest.role, "role", problems),
  };
  if (problems.length > 0) throw invalidFields(problems);
  if (wanted.status) filter.status = wanted.status;
  if (wanted.role) filter.role = wanted.role;
  return filter;
}

/** admin/audit's query: action, actor, target, since, and the page (limit, after an event id). */
export function parseAuditFilter(query: Record<string, string | undefined>, now = Date.now()): AuditFilter {
  const { paging, rest } = split(query, ["action", "actor", "target", "user", "since"]);
  const problems: FieldError[] = [];
  const { limit, after } = pageOrProblems(paging, problems);
  for (const problem of problems) if (problem.field === "after") problem.message = "must be an event id";
  const filter: AuditFilter = { limit, ...(after && { before: after }) };
  if (rest.action !== undefined) {
    if (isAuditAction(rest.action)) filter.action = rest.action;
    else problems.push({ field: "action", message: `must be one of ${AUDIT_ACTIONS.join(", ")}` });
  }
  const into = { actor: "actorId", target: "targetId", user: "userId" } as const;
  for (const field of ["actor", "target", "user"] as const) {
    const value = rest[field];
    if (value === undefined) continue;
    const id = parseId(value);
    if (id === null) problems.push({ field, message: "must be a user id" });
    else filter[into[field]] = id;
  }
  if (rest.since !== undefined) {
    const since = parseSince(rest.since, now);
    if (since === null)
      problems.push({
        field: "since",
        message:
          "must be an ISO-8601 date-time or a duration such as 30m, 24h or 7d, reaching back no further than the year 0000",
      });
    else filter.since = since;
  }
  if (problems.length > 0) throw invalidFields(problems);
  return filter;
}

/** 0000-01-01T00:00:00Z: the earliest instant an ISO-8601 date-time of four-digit years can write. */
const EARLIEST = -62_167_219_200_000;

/**
 * An instant: an ISO-8601 date-time as given, or a duration (30m, 24h, 7d) back from `now`. null:
 * neither, or further back than the year 0000 (a Date that far back is invalid, or not ISO-8601 text).
 */
export function parseSince(text: string, now = Date.now()): string | null {
  const seconds = parseDuration(text);
  if (seconds !== null) {
    const at = now - seconds * 1000;
    return at >= EARLIEST ? new Date(at).toISOString() : null;
  }
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(text)) return null;
  const at = Date.parse(text);
  return at >= EARLIEST ? new Date(at).toISOString() : null;
}

function pageOrProblems(paging: Record<string, string>, problems: FieldError[]): { limit: number; after?: string } {
  try {
    return parsePage(paging);
  } catch (error) {
    const errors = (error as { errors?: FieldError[] }).errors;
    if (!errors) throw error;
    problems.push(...errors);
    return { limit: 1 };
  }
}
