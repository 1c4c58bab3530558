// Request and answer shapes of the session routes (t schemas).
import { t } from "elysia";
import { invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors/index.ts";

const closed = { additionalProperties: false } as const;

/** A refresh token as the routes take it; longer is no token svc issued. */
const REFRESH_TOKEN_MAX = 1024;

/** For the document only: the body may be left out in cookie mode (see refreshRequest). */
export const refreshBody = t.Object(
  {
    refresh_token: t.Optional(
      t.String({
        maxLength: REFRESH_TOKEN_MAX,
        description:
          "The refresh token of your last login or refresh. Left out (or no body at all), the session cookie's is used: a cookie-mode login.",
      }),
    ),
    mode: t.Optional(
      t.Literal("cookie", {
        description:
          "cookie: renew the session the cookie holds, and answer 204 (no session) when the request carries no session cookie, as a signed-out page load finds out without an error. Not with refresh_token.",
      }),
    ),
  },
  closed,
);

const REFRESH_FIELDS = new Set(Object.keys(refreshBody.properties));

/**
 * The refresh token a refresh body sends, if any, and whether it names the cookie's session (mode cookie);
 * no body at all is `{}`. Throws validation_failed.
 */
export function refreshRequest(body: unknown): { refreshToken?: string; cookieMode: boolean } {
  const problems = unknownFields(body, REFRESH_FIELDS);
  const { refresh_token: refreshToken, mode } = body as { refresh_token?: unknown; mode?: unknown };
  problems.push(...refreshTokenProblems(refreshToken));
  if (mode !== undefined && mode !== "cookie") problems.push({ field: "mode", message: 'must be "cookie"' });
  if (mode !== undefined && refreshToken !== undefined) {
    problems.push({ field: "mode", message: "must be left out when refresh_token is sent" });
  }
  if (problems.length > 0) throw invalidFields(problems);
  const cookieMode = mode === "cookie";
  return refreshToken === undefined ? { cookieMode } : { refreshToken: refreshToken as string, cookieMode };
}

function unknownFields(body: unknown, known: Set<string>): FieldError[] {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidFields([{ field: "body", message: "must be a JSON object" }]);
  }
  return Object.keys(body)
    .filter((key) => !known.has(key))
    .map((field) => ({ field, message: UNKNOWN_FIELD }));
}

function refreshTokenProblems(refreshToken: unknown): FieldError[] {
  if (refreshToken !== undefined && typeof refreshToken !== "string")
    return [{ field: "refresh_token", message: "must be a string" }];
  if (typeof refreshToken === "string" && refreshToken.length > REFRESH_TOKEN_MAX)
    return [{ field: "refresh_token", message: `must be at most ${REFRESH_TOKEN_MAX} characters` }];
  return [];
}

export const LOGOUT_SCOPES = ["local", "others", "global"] as const;
export type LogoutScope = (typeof LOGOUT_SCOPES)[number];

/** For the document only: the body may be left out, which Elysia's body schemas cannot say (see logoutRequest). */
export const logoutBody = t.Object(
  {
    scope: t.Optional(
      t.Union(
        LOGOUT_SCOPES.map((scope) => t.Literal(scope)),
        { description: "local (default): this session; others: every other one; global: all of them." },
      ),
    ),
    refresh_token: t.Optional(
      t.String({
        maxLength: REFRESH_TOKEN_MAX,
        description:
          "The session's refresh token, in place of a Bearer token: it names the session, so signing out works after the access token expired. Sent, it decides whichever Authorization header comes with it. With neither, the session cookie names the session (a cookie-mode login), and the answer clears it.",
      }),
    ),
  },
  closed,
);

/** What a logout asks: which sessions, and (when it names its session by one) the refresh token. */
export interface LogoutRequest {
  scope: LogoutScope;
  refreshToken?: string;
}

const LOGOUT_FIELDS = new Set(Object.keys(logoutBody.properties));

/** The logout a body asks for; no body at all is `{}`. Throws validation_failed naming what is wrong. */
export function logoutRequest(body: unknown): LogoutRequest {
  const problems = unknownFields(body, LOGOUT_FIELDS);
  const { scope = "local", refresh_token: refreshToken } = body as { scope?: unknown; refresh_token?: unknown };
  if (!LOGOUT_SCOPES.includes(scope as LogoutScope)) {
    problems.push({ field: "scope", message: `must be one of ${LOGOUT_SCOPES.join(", ")}` });
  }
  problems.push(...refreshTokenProblems(refreshToken));
  if (problems.length > 0) throw invalidFields(problems);
  return refreshToken === undefined
    ? { scope: scope as LogoutScope }
    : { scope: scope as LogoutScope, refreshToken: refreshToken as string };
}

export const sessionSchema = t.Object({
  id: t.String({ format: "uuid" }),
  created_at: t.String({ format: "date-time", description: "The login that started it." }),
  last_used_at: t.String({ format: "date-time", description: "The last login or refresh." }),
  expires_at: t.String({ format: "date-time", description: "When its refresh token expires, unless refreshed." }),
  user_agent: t.Union([t.String(), t.Null()]),
  client_address: t.Union([t.String(), t.Null()]),
  amr: t.Array(t.String(), {
    description:
      'How it signed in, RFC 8176\'s names: ["pwd"] a password, ["pwd","otp"] and an authenticator code, ["pwd","rec"] and a recovery code, ["pwd","hwk"] and a passkey, ["hwk"] a passkey alone.',
  }),
  mfa_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "When it last showed a second factor (its login or a step-up); null: never.",
  }),
  current: t.Boolean({ description: "The session of the token that asked." }),
});
