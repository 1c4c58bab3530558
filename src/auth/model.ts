// Request and answer shapes of the session routes (t schemas).
import { t } from "elysia";
import { invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors.ts";

const closed = { additionalProperties: false } as const;

export const refreshBody = t.Object(
  { refresh_token: t.String({ maxLength: 1024, description: "The refresh token of your last login or refresh." }) },
  closed,
);

export const LOGOUT_SCOPES = ["local", "others", "global"] as const;
export type LogoutScope = (typeof LOGOUT_SCOPES)[number];

/** For the document only: the body may be left out, which Elysia's body schemas cannot say (see logoutScope). */
export const logoutBody = t.Object(
  {
    scope: t.Optional(
      t.Union(
        LOGOUT_SCOPES.map((scope) => t.Literal(scope)),
        { description: "local (default): this session; others: every other one; global: all of them." },
      ),
    ),
  },
  closed,
);

/** The scope a logout body asks for; no body at all is `{}`. Throws validation_failed naming what is wrong. */
export function logoutScope(body: unknown): LogoutScope {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidFields([{ field: "body", message: "must be a JSON object" }]);
  }
  const problems: FieldError[] = Object.keys(body)
    .filter((key) => key !== "scope")
    .map((field) => ({ field, message: UNKNOWN_FIELD }));
  const { scope = "local" } = body as { scope?: unknown };
  if (!LOGOUT_SCOPES.includes(scope as LogoutScope)) {
    problems.push({ field: "scope", message: `must be one of ${LOGOUT_SCOPES.join(", ")}` });
  }
  if (problems.length > 0) throw invalidFields(problems);
  return scope as LogoutScope;
}

export const sessionSchema = t.Object({
  id: t.String({ format: "uuid" }),
  created_at: t.String({ format: "date-time", description: "The login that started it." }),
  last_used_at: t.String({ format: "date-time", description: "The last login or refresh." }),
  expires_at: t.String({ format: "date-time", description: "When its refresh token expires, unless refreshed." }),
  user_agent: t.Union([t.String(), t.Null()]),
  client_address: t.Union([t.String(), t.Null()]),
  current: t.Boolean({ description: "The session of the token that asked." }),
});
