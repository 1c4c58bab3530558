// POST /svc-api/v1/auth/login: username (or e-mail) and password in, a bearer token out.
import { Elysia } from "elysia";
import { jsonBody } from "../http/json-body.ts";
import { loginBody } from "../users/model.ts";
import type { UserService } from "../users/service.ts";

export function authRoutes(users: UserService, maxBodyBytes: number) {
  return new Elysia({ prefix: "/svc-api/v1/auth" }).post(
    "/login",
    ({ body, set }) => {
      set.headers["cache-control"] = "no-store";
      return users.login(body);
    },
    { parse: jsonBody(maxBodyBytes), body: loginBody },
  );
}
