// What the session tests share (test/api/sessions*.test.ts): an app with its auth calls, and a moved clock.
import { setSystemTime } from "bun:test";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp, type ConfigOverrides } from "../helpers.ts";

export const AUTH = "/svc-api/v1/auth";
export const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export const claims = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());

export async function sessionsApp(config: ConfigOverrides = {}, on?: VersionedStore) {
  const app = await testApp({ config, ...(on && { on }) });
  const refresh = (refresh_token: unknown, headers: Record<string, string> = {}) =>
    app.call("POST", `${AUTH}/refresh`, { body: { refresh_token }, headers });
  const login = (username: string, password: string, headers: Record<string, string> = {}) =>
    app.call("POST", `${AUTH}/login`, { body: { username, password }, headers });
  const me = (token: string) => app.call("GET", "/svc-api/v1/users/me", { token });
  const sessions = (token: string) => app.call("GET", `${AUTH}/sessions`, { token });
  return { ...app, refresh, login, me, sessions };
}

/** Runs `work` with the clock moved on by `ms`, then puts it back. */
export async function later<T>(ms: number, work: () => Promise<T>): Promise<T> {
  setSystemTime(new Date(Date.now() + ms));
  try {
    return await work();
  } finally {
    setSystemTime();
  }
}
