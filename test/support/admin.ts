// What the admin role's tests share (test/api/admin*.test.ts): an app with an administrator and its calls.
import { expect } from "bun:test";
import { promote as makeAdmin, testApp, type ConfigOverrides } from "../helpers.ts";

export const ADMIN = "/svc-api/v1/admin";
export const AUTH = "/svc-api/v1/auth";
export const CODE_FORMAT = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An app with an administrator, `root`, and a way to make more. */
export async function adminApp(config: ConfigOverrides = {}) {
  const app = await testApp({ config });
  const promote = (id: string) => makeAdmin(app.store, id);
  const root = await app.signUp("root");
  await promote(root.user.id);
  const me = (token: string) => app.call("GET", "/svc-api/v1/users/me", { token });
  const login = (username: string, password: string) =>
    app.call("POST", `${AUTH}/login`, { body: { username, password } });
  const patch = (id: string, body: unknown, token = root.token, type = "application/merge-patch+json") =>
    app.call("PATCH", `${ADMIN}/users/${id}`, { body, token, headers: { "content-type": type } });
  const issue = (id: string, token = root.token) => app.call("POST", `${ADMIN}/users/${id}/password-reset`, { token });
  const redeem = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.call("POST", `${AUTH}/password-reset`, { body, headers });
  const audit = async (query = "") => {
    const reply = await app.call("GET", `${ADMIN}/audit${query}`, { token: root.token });
    expect(reply.status).toBe(200);
    return reply.body as Array<Record<string, unknown>>;
  };
  return { ...app, root, promote, me, login, patch, issue, redeem, audit };
}
