// /svc-api/v1/auth: login (username or e-mail and password in, a bearer token out) and logout.
import { Elysia } from "elysia";
import { clientAddress } from "../http/client-address.ts";
import { jsonBody } from "../http/json-body.ts";
import { documented } from "../http/openapi.ts";
import { loginBody, loginSchema } from "../users/model.ts";
import type { UserService } from "../users/service.ts";
import type { Authenticator } from "./authenticator.ts";
import { bearer } from "./bearer.ts";

export function authRoutes(users: UserService, authenticator: Authenticator, maxBodyBytes: number, trustProxy: number) {
  return new Elysia({ prefix: "/svc-api/v1/auth" })
    .post("/login", ({ body, request }) => users.login(body, clientAddress(request, trustProxy)), {
      parse: jsonBody(maxBodyBytes),
      body: loginBody,
      detail: documented({
        operationId: "login",
        summary: "Log in with username (or e-mail) and password",
        tag: "auth",
        ok: { status: 200, description: "A bearer token, and you", schema: loginSchema },
        errors: [
          "validation_failed",
          "malformed_json",
          "invalid_credentials",
          "too_many_requests",
          "payload_too_large",
          "unsupported_media_type",
        ],
      }),
    })
    .use(bearer(authenticator))
    .post(
      "/logout",
      async ({ token, set }) => {
        await users.logout(token);
        set.status = 204;
      },
      {
        detail: documented({
          operationId: "logout",
          summary: "Log out: the token sent stops working at once",
          tag: "auth",
          auth: true,
          ok: { status: 204, description: "Revoked" },
          errors: [],
        }),
      },
    );
}
