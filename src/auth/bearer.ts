// The Elysia side of authentication: routes registered after `.use(bearer(...))` get `caller` and its `token`.
import { Elysia } from "elysia";
import { AppError } from "../errors.ts";
import { requestInfo } from "../http/request-context.ts";
import type { Authenticator } from "./authenticator.ts";

export function bearer(authenticator: Authenticator, { admin = false } = {}) {
  // derive, not resolve: the token is checked before the body's fields are, so a stranger learns nothing.
  return new Elysia({ name: admin ? "svc/bearer-admin" : "svc/bearer" }).derive(
    { as: "scoped" },
    async ({ request }) => {
      const { user: caller, token } = await authenticator.authenticate(request.headers.get("authorization"));
      const info = requestInfo(request);
      if (info) info.userId = caller.id;
      // The role is read from the account on every request: a demotion takes effect at once.
      if (admin && caller.role !== "admin") throw new AppError("forbidden", "This needs an administrator's token.");
      return { caller, token };
    },
  );
}
