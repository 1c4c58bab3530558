// Sessions through the public surface: login's pair, and refresh and its rotation (races and reuse
// included); how sessions end is in sessions-ending.test.ts. Runs on SQLite, and on PostgreSQL with
// `bun run test:postgres`.
import { describe, expect, setSystemTime, test } from "bun:test";
import { expectProblem } from "../helpers.ts";
import { AUTH, TOKEN_FORMAT, claims, later, sessionsApp } from "../support/sessions.ts";

describe("login starts a session", () => {
  test("the answer adds an opaque refresh token and its lifetime; the access token names the session", async () => {
    const app = await sessionsApp();
    const { user, password } = await app.signUp("ann");
    const reply = await app.login("ann", password, { "user-agent": "curl/8.5" });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ token_type: "Bearer", expires_in: 900, refresh_expires_in: 30 * 86400 });
    expect(reply.body.refresh_token).toMatch(TOKEN_FORMAT);
    const { sid } = claims(reply.body.token);
    const listed = await app.sessions(reply.body.token);
    expect(listed.status).toBe(200);
    expect(listed.body[0]).toEqual({
      id: sid,
      created_at: expect.any(String),
      last_used_at: expect.any(String),
      expires_at: expect.any(String),
      user_agent: "curl/8.5",
      client_address: "unknown",
      amr: ["pwd"],
      mfa_at: null,
      current: true,
    });
    expect(Date.parse(listed.body[0].expires_at) - Date.parse(listed.body[0].created_at)).toBe(30 * 86400 * 1000);
    expect(user.id).toBe(claims(reply.body.token).sub);
  });

  test("the client address is read under SVC_TRUST_PROXY's rules", async () => {
    const app = await sessionsApp({ trustProxy: 1 });
    const { password } = await app.signUp("ann");
    const reply = await app.login("ann", password, { "x-forwarded-for": "198.51.100.7, 203.0.113.9" });
    expect((await app.sessions(reply.body.token)).body[0].client_address).toBe("203.0.113.9");
  });

  test("the refresh token is never logged", async () => {
    const app = await sessionsApp();
    const { refresh } = await app.signUp("ann");
    const next = (await app.refresh(refresh)).body.refresh_token;
    await app.refresh(refresh);
    const logs = (await app.logs()).join("\n");
    expect(logs).not.toContain(refresh);
    expect(logs).not.toContain(next);
  });
});

describe("POST /auth/refresh", () => {
  test("trades the refresh token for a new pair, shaped as login's; both tokens work", async () => {
    const app = await sessionsApp();
    const { user, token, refresh } = await app.signUp("ann");
    const reply = await app.refresh(refresh);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      token: expect.any(String),
      token_type: "Bearer",
      expires_in: 900,
      refresh_token: expect.stringMatching(TOKEN_FORMAT),
      refresh_expires_in: 30 * 86400,
      user: { ...user, updated_at: expect.any(String) },
    });
    expect(reply.body.refresh_token).not.toBe(refresh);
    expect(reply.body.token).not.toBe(token);
    expect(claims(reply.body.token).sid).toBe(claims(token).sid);
    expect((await app.me(reply.body.token)).status).toBe(200);
    expect((await app.refresh(reply.body.refresh_token)).status).toBe(200);
    expect(reply.headers.get("cache-control")).toBe("no-store");
  });

  test("moves the session's last use and expiry on (sliding)", async () => {
    const app = await sessionsApp();
    const { token, refresh } = await app.signUp("ann");
    const before = (await app.sessions(token)).body[0];
    const after = await later(5, async () => (await app.sessions((await app.refresh(refresh)).body.token)).body[0]);
    expect(after.id).toBe(before.id);
    expect(after.created_at).toBe(before.created_at);
    expect(Date.parse(after.last_used_at)).toBeGreaterThan(Date.parse(before.last_used_at));
    expect(Date.parse(after.expires_at)).toBeGreaterThan(Date.parse(before.expires_at));
  });

  test("unknown, malformed or empty refresh tokens: 401 invalid_refresh_token", async () => {
    const app = await sessionsApp();
    await app.signUp("ann");
    for (const bad of ["A".repeat(43), "short", "", "not a token at all, with spaces!!!!!!!!!!!!!", "=".repeat(43)]) {
      expectProblem(await app.refresh(bad), 401, "invalid_refresh_token");
    }
  });

  test("a body without the token, of the wrong type or with more: 400 validation_failed", async () => {
    const app = await sessionsApp();
    const { refresh } = await app.signUp("ann");
    expectProblem(await app.call("POST", `${AUTH}/refresh`, { body: {} }), 400, "validation_failed");
    expectProblem(await app.refresh(42), 400, "validation_failed");
    expectProblem(
      await app.call("POST", `${AUTH}/refresh`, { body: { refresh_token: refresh, user: "x" } }),
      400,
      "validation_failed",
    );
    expectProblem(
      await app.call("POST", `${AUTH}/refresh`, { raw: "{", headers: { "content-type": "application/json" } }),
      400,
      "malformed_json",
    );
    expectProblem(await app.call("POST", `${AUTH}/refresh`, { raw: refresh }), 415, "unsupported_media_type");
    // None of them spent the token.
    expect((await app.refresh(refresh)).status).toBe(200);
  });

  test("an expired refresh token: 401 invalid_refresh_token", async () => {
    const app = await sessionsApp({
      jwt: { secret: new TextEncoder().encode("x".repeat(16) + "y".repeat(16)), ephemeral: false, ttlSeconds: 1 },
      sessions: { refreshTtlSeconds: 1, maxAgeSeconds: 3600, reuseWindowMs: 10_000 },
    });
    const { refresh } = await app.signUp("ann");
    expectProblem(await later(1100, () => app.refresh(refresh)), 401, "invalid_refresh_token");
  });

  test("no refresh outlives the session's absolute limit", async () => {
    const app = await sessionsApp({ sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 2, reuseWindowMs: 10_000 } });
    const { refresh } = await app.signUp("ann");
    const renewed = await app.refresh(refresh);
    expect(renewed.body.refresh_expires_in).toBeLessThanOrEqual(2);
    expectProblem(await later(2100, () => app.refresh(renewed.body.refresh_token)), 401, "invalid_refresh_token");
  });

  test("the same token again within the reuse window gets the same pair, and ends nothing", async () => {
    const app = await sessionsApp();
    const { refresh } = await app.signUp("ann");
    const first = await app.refresh(refresh);
    const again = await app.refresh(refresh);
    expect(again.status).toBe(200);
    expect(again.body.token).toBe(first.body.token);
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
    expect(again.body.expires_in).toBeLessThanOrEqual(first.body.expires_in);
    expect((await app.me(first.body.token)).status).toBe(200);
    expect((await app.refresh(first.body.refresh_token)).status).toBe(200);
  });

  test("20 parallel refreshes of one token all succeed with one successor pair", async () => {
    const app = await sessionsApp();
    const { token, refresh } = await app.signUp("ann");
    const replies = await Promise.all(Array.from({ length: 20 }, () => app.refresh(refresh)));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(replies.map((r) => r.body.token)).size).toBe(1);
    expect(new Set(replies.map((r) => r.body.refresh_token)).size).toBe(1);
    expect((await app.sessions(token)).body).toHaveLength(1);
    const successor = replies[0]!.body;
    expect((await app.me(successor.token)).status).toBe(200);
    expect((await app.refresh(successor.refresh_token)).status).toBe(200);
  });

  test("after the window, reuse ends the whole session: 401 refresh_token_reused, a warning naming the session, not the token", async () => {
    const app = await sessionsApp({ sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 7200, reuseWindowMs: 100 } });
    const { password, refresh } = await app.signUp("ann");
    const other = (await app.login("ann", password)).body;
    const successor = (await app.refresh(refresh)).body;
    expectProblem(await later(150, () => app.refresh(refresh)), 401, "refresh_token_reused");
    // The thief's copy and the honest successor alike are gone, access tokens too; other sessions stay.
    expectProblem(await app.refresh(successor.refresh_token), 401, "invalid_refresh_token");
    expectProblem(await app.me(successor.token), 401, "unauthorized");
    expectProblem(await app.refresh(refresh), 401, "invalid_refresh_token");
    expect((await app.me(other.token)).status).toBe(200);
    const warning = (await app.logs()).map((line) => JSON.parse(line)).find((l) => l.msg?.includes("presented again"));
    expect(warning).toMatchObject({ level: "warn", session_id: claims(successor.token).sid });
    expect(JSON.stringify(warning)).not.toContain(refresh);
  });

  test("with SVC_REFRESH_REUSE_WINDOW=0 any repeat is reuse, even within the same millisecond", async () => {
    const app = await sessionsApp({ sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 7200, reuseWindowMs: 0 } });
    const { refresh } = await app.signUp("ann");
    // The clock stands still: the repeat comes 0 ms after the rotation.
    setSystemTime(new Date(Date.now()));
    try {
      expect((await app.refresh(refresh)).status).toBe(200);
      expectProblem(await app.refresh(refresh), 401, "refresh_token_reused");
    } finally {
      setSystemTime();
    }
  });

  test("failed refreshes are throttled per client: 429 with Retry-After, other clients unaffected", async () => {
    const app = await sessionsApp({
      trustProxy: 1,
      loginThrottle: {
        maxFailures: 5,
        backoffBaseMs: 1000,
        backoffMaxMs: 60_000,
        clientMaxFailures: 3,
        clientWindowMs: 60_000,
      },
    });
    const { refresh } = await app.signUp("ann");
    const from = (address: string) => ({ "x-forwarded-for": address });
    for (let i = 0; i < 3; i++) {
      expectProblem(await app.refresh("B".repeat(43), from("198.51.100.1")), 401, "invalid_refresh_token");
    }
    const blocked = await app.refresh(refresh, from("198.51.100.1"));
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The blocked attempt spent nothing: the token still works from elsewhere.
    expect((await app.refresh(refresh, from("198.51.100.2"))).status).toBe(200);
  });

  test("a refresh token of a deleted account: 401 invalid_refresh_token", async () => {
    const app = await sessionsApp();
    const { token, refresh } = await app.signUp("ann");
    expect((await app.call("DELETE", "/svc-api/v1/users/", { token })).status).toBe(204);
    expectProblem(await app.refresh(refresh), 401, "invalid_refresh_token");
  });
});
