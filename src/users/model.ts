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
export const listUsersQuery = t.Object({ limit: t.Optional(t.String()), after: t.Optional(t.String()) }, closed);

export type CreateUserInput = Static<typeof createUserBody>;
export type LoginInput = Static<typeof loginBody>;
export type UpdateSelfInput = Static<typeof updateSelfBody>;
export type ChangePasswordInput = Static<typeof changePasswordBody>;

export interface UserView {
  id: string;
  username: string;
  email?: string;
  created_at: string;
  updated_at: string;
}

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
