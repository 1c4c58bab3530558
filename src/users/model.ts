// Request shapes for the users routes (t schemas), and the user as the API shows it.
import { t, type Static } from "elysia";
import type { UserRecord } from "../db/store.ts";

// Generous caps that stop oversized input before any hashing; the real rules live in rules.ts.
const text = (maxLength: number) => t.String({ maxLength });
const closed = { additionalProperties: false } as const;

export const createUserBody = t.Object({ username: text(256), email: text(512), password: text(1024) }, closed);
export const loginBody = t.Object({ username: text(512), password: text(1024) }, closed);
export const updateSelfBody = t.Object(
  { username: t.Optional(text(256)), email: t.Optional(text(512)), current_password: t.Optional(text(1024)) },
  closed,
);
export const changePasswordBody = t.Object({ current_password: text(1024), new_password: text(1024) }, closed);
export const listUsersQuery = t.Object(
  {
    limit: t.Optional(t.String({ description: "Page size, 1-1000 (default 100)." })),
    after: t.Optional(t.String({ description: "Return users after this id (from the Link header of the previous page)." })),
  },
  closed,
);

/** The user as responses show it. */
export const userSchema = t.Object({
  id: t.String({ format: "uuid" }),
  username: t.String(),
  email: t.Optional(t.String({ description: "Only in your own record." })),
  created_at: t.String({ format: "date-time" }),
  updated_at: t.String({ format: "date-time" }),
});

export const tokenSchema = t.Object({
  token: t.String({ description: "A JWT; send it as Authorization: Bearer <token>." }),
  token_type: t.Literal("Bearer"),
  expires_in: t.Integer({ description: "Seconds until it expires." }),
});

export const loginSchema = t.Object({ ...tokenSchema.properties, user: t.Object(userSchema.properties, { description: "You, e-mail included." }) });

export type CreateUserInput = Static<typeof createUserBody>;
export type LoginInput = Static<typeof loginBody>;
export type UpdateSelfInput = Static<typeof updateSelfBody>;
export type ChangePasswordInput = Static<typeof changePasswordBody>;

export type UserView = Static<typeof userSchema>;

/** The user as the API shows it: never a hash, and the e-mail only to its owner. */
export function userView(user: UserRecord, viewerId: string | null): UserView {
  return {
    id: user.id,
    username: user.username,
    ...(user.id === viewerId && { email: user.email }),
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}
