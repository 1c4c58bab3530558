// Request shapes for the users routes (t schemas), and the user as the API shows it.
import { t, type Static } from "elysia";
import type { UserRecord } from "../db/store.ts";
import { enumOf, integer, pageAnswer, ref, RULE_MESSAGE, type QueryParameter } from "../http/openapi.ts";
import { SESSION_MODES } from "../auth/cookie-session.ts";
import { PASSWORD_MAX, PASSWORD_MIN } from "../auth/passwords.ts";
import { invalidFields } from "../errors/index.ts";
import { linkToken } from "./link-tokens.ts";
import { EMAIL, EMAIL_MAX, EMAIL_MESSAGE, PASSWORD_MESSAGE, USERNAME, USERNAME_MESSAGE } from "./rules.ts";

// The rules as a client can read them in the OpenAPI document, checked before any hashing; RULE_MESSAGE
// is the message a broken rule gets (rules.ts checks again, for callers other than HTTP).
const username = t.String({
  minLength: 3,
  maxLength: 32,
  pattern: USERNAME.source,
  [RULE_MESSAGE]: USERNAME_MESSAGE,
  description: "Letters, digits, _ . - ; unique without regard to case.",
});
const email = t.String({
  maxLength: EMAIL_MAX,
  pattern: EMAIL.source,
  [RULE_MESSAGE]: EMAIL_MESSAGE,
  description: "Stored in lower case; unique.",
});
// JSON Schema counts characters; the password's are counted after NFKC normalisation. (Elysia counts
// UTF-16 units, so a password of more than 64 characters outside the BMP is refused early.)
const newPassword = t.String({
  minLength: PASSWORD_MIN,
  maxLength: PASSWORD_MAX,
  [RULE_MESSAGE]: PASSWORD_MESSAGE,
  description: "8-128 characters; not one of the common passwords.",
});
/** A password being checked, not set: any stored one must get through. */
const givenPassword = t.String({ maxLength: 1024 });
const closed = { additionalProperties: false } as const;

/** A new account's fields, as users/create and admin/users take them. */
export const accountFields = { username, email, password: newPassword };
export const createUserBody = t.Object(
  {
    ...accountFields,
    invitation: t.Optional(
      t.String({
        maxLength: 128,
        description:
          "The invitation code an administrator gave you, required while sign-up is by invitation (SVC_SIGNUP=invite); case, dashes and spaces do not matter. Ignored while sign-up is open.",
      }),
    ),
  },
  closed,
);
/** Where a new session's refresh token goes: the body (json), or an HttpOnly cookie (docs/browser-apps.md). */
const sessionMode = t.Optional(
  enumOf(SESSION_MODES, {
    description:
      "json (default): the refresh token in the body. cookie: in an HttpOnly cookie instead, for browser apps on svc's origin or a listed one; auth/refresh and auth/logout then take it from the cookie.",
  }),
);
export const loginBody = t.Object(
  {
    username: t.String({ maxLength: 512, description: "Your username (any case) or e-mail." }),
    password: givenPassword,
    mode: sessionMode,
  },
  closed,
);
export const updateSelfBody = t.Object(
  { username: t.Optional(username), email: t.Optional(email), current_password: t.Optional(givenPassword) },
  closed,
);
/** current_password may be left out by an account that has none (made through an OpenID provider). */
export const changePasswordBody = t.Object(
  { current_password: t.Optional(givenPassword), new_password: newPassword },
  closed,
);
export const redeemResetBody = t.Object(
  {
    username: t.String({ maxLength: 512, description: "Your username (any case) or e-mail." }),
    reset_code: t.String({
      maxLength: 128,
      description: "The code an administrator gave you; case, dashes and spaces do not matter.",
    }),
    new_password: newPassword,
    mode: sessionMode,
  },
  closed,
);

/**
 * auth/password-reset's body: a code an administrator issued (username and reset_code), or the token of
 * a mailed link (token; mail-resets.ts). One object rather than a union, so a refusal names its fields.
 */
export const redeemAnyResetBody = t.Object(
  {
    username: t.Optional(redeemResetBody.properties.username),
    reset_code: t.Optional(redeemResetBody.properties.reset_code),
    token: t.Optional(linkToken),
    new_password: newPassword,
    mode: sessionMode,
  },
  closed,
);
export type RedeemAnyResetInput = Static<typeof redeemAnyResetBody>;
/** A mailed reset link's token and the new password (mail-resets.ts). */
export type MailedResetInput = Pick<RedeemAnyResetInput, "new_password" | "mode"> & { token: string };

/** Which of the two the body is: a token alone, or a username with a code; validation_failed otherwise. */
export function resetForm({ username, reset_code, token, ...rest }: RedeemAnyResetInput) {
  if (token !== undefined) {
    const extra = [username !== undefined && "username", reset_code !== undefined && "reset_code"].filter(Boolean);
    if (extra.length > 0)
      throw invalidFields(extra.map((field) => ({ field: String(field), message: "must not be sent with token" })));
    return { by: "token" as const, input: { token, ...rest } };
  }
  if (username === undefined || reset_code === undefined)
    throw invalidFields(
      [username === undefined && "username", reset_code === undefined && "reset_code"]
        .filter(Boolean)
        .map((field) => ({ field: String(field), message: "is required (or token, from a mailed link)" })),
    );
  return { by: "code" as const, input: { username, reset_code, ...rest } };
}

/** users/all's query, read by parseUserList; described here for the document. */
export const listUsersQuery: QueryParameter[] = [
  { name: "limit", description: "Page size.", schema: integer({ minimum: 1, maximum: 1000, default: 100 }) },
  {
    name: "after",
    description: "Return users after this id (from the Link header's next page).",
    schema: t.String({ format: "uuid" }),
  },
  {
    name: "before",
    description:
      "Return the last users before this id, still oldest first (from the Link header's prev page); not with after.",
    schema: t.String({ format: "uuid" }),
  },
  {
    name: "count",
    description: "true: the answer says how many users there are, in X-Total-Count.",
    schema: t.Boolean({ default: false }),
  },
];

/** users/all's answer: a page, the pages beside it in Link, and the total when asked for. */
export const userPageAnswer = {
  ...pageAnswer("A page of users", "User"),
  headers: {
    Link: 'The pages beside this one and the first, as <url>; rel="next" (while more remain), rel="prev" (while users come before it) and rel="first" (on a page asked for with after or before)',
    "X-Total-Count": "How many users there are (with count=true).",
  },
};

/** The user as responses show it (User in the OpenAPI document). */
export const userSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    username: t.String(),
    email: t.Optional(t.String({ description: "Only in your own record." })),
    email_verified: t.Optional(
      t.Boolean({ description: "Only in your own record: whether the address was shown to be yours." }),
    ),
    email_verified_at: t.Optional(
      t.Union([t.String({ format: "date-time" }), t.Null()], {
        description: "Only in your own record: when the address was verified; null: not yet.",
      }),
    ),
    role: t.Optional(enumOf(["user", "admin"], { description: "Only in your own record." })),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { description: "A user; the e-mail and role only in your own record (see Me)." },
);

/** Your own record (Me): the user with every field, so that a client need not check for the e-mail. */
export const meSchema = t.Required(userSchema, { description: "You: your own record, e-mail and role included." });

export const tokenSchema = t.Object({
  token: t.String({ description: "A JWT; send it as Authorization: Bearer <token>." }),
  token_type: t.Literal("Bearer"),
  expires_in: integer({ description: "Seconds until it expires." }),
});

/** An access token and the refresh token that renews it: what login, refresh and a password change give. */
export const pairSchema = t.Object({
  ...tokenSchema.properties,
  refresh_token: t.Optional(
    t.String({
      description:
        "Opaque; send it to auth/refresh for a new pair before it expires. It works once. Absent in cookie mode: the session cookie holds it.",
    }),
  ),
  refresh_expires_in: integer({ description: "Seconds until the refresh token expires." }),
});

/**
 * A new session's pair, and you: what login, refresh and a redeemed reset code give. An allOf, which
 * openapi-typescript turns into `TokenPair & { user: Me }`.
 */
export const loginSchema = t.Intersect([ref("TokenPair"), t.Object({ user: ref("Me") })]);

export type CreateUserInput = Static<typeof createUserBody>;
export type LoginInput = Static<typeof loginBody>;
export type UpdateSelfInput = Static<typeof updateSelfBody>;
export type ChangePasswordInput = Static<typeof changePasswordBody>;
export type RedeemResetInput = Static<typeof redeemResetBody>;

export type UserView = Static<typeof userSchema>;

/** The user as the API shows it: never a hash, and the e-mail only to its owner. */
export function userView(user: UserRecord, viewerId: string | null): UserView {
  return {
    id: user.id,
    username: user.username,
    ...(user.id === viewerId && {
      email: user.email,
      email_verified: user.emailVerifiedAt !== null,
      email_verified_at: user.emailVerifiedAt,
      role: user.role,
    }),
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}
