// The /svc-api/v1/users routes: thin adapters from HTTP to the user service.
import { Elysia } from "elysia";
import type { Authenticator } from "../auth/authenticator.ts";
import { bearer } from "../auth/bearer.ts";
import { jsonBody } from "../http/json-body.ts";
import { changePasswordBody, createUserBody, listUsersQuery, updateSelfBody, userView } from "./model.ts";
import { parsePage, type UserService } from "./service.ts";

const PREFIX = "/svc-api/v1/users";

export function usersRoutes(users: UserService, authenticator: Authenticator, maxBodyBytes: number) {
  const json = jsonBody(maxBodyBytes);
  return new Elysia({ prefix: PREFIX })
    .post(
      "/create",
      async ({ body, set }) => {
        const user = await users.create(body);
        set.status = 201;
        set.headers.location = `${PREFIX}/${user.id}`;
        return userView(user, user.id);
      },
      { parse: json, body: createUserBody },
    )
    .use(bearer(authenticator))
    .get(
      "/all",
      async ({ query, caller, set }) => {
        const page = parsePage(query.limit, query.after);
        // One extra row tells whether another page exists without a count query.
        const rows = await users.list({ ...page, limit: page.limit + 1 });
        const more = rows.length > page.limit;
        const shown = more ? rows.slice(0, page.limit) : rows;
        if (more) {
          const next = `${PREFIX}/all?limit=${page.limit}&after=${shown[shown.length - 1]!.id}`;
          set.headers.link = `<${next}>; rel="next"`;
        }
        return shown.map((user) => userView(user, caller.id));
      },
      { query: listUsersQuery },
    )
    .get("/:user_id", async ({ params, caller }) => userView(await users.get(params.user_id), caller.id))
    .put("/", async ({ body, caller }) => userView(await users.updateSelf(caller, body), caller.id), {
      parse: json,
      body: updateSelfBody,
    })
    .put(
      "/password",
      ({ body, caller }) => users.changePassword(caller, body),
      { parse: json, body: changePasswordBody },
    )
    .delete("/", async ({ caller, set }) => {
      await users.deleteSelf(caller);
      set.status = 204;
    });
}
