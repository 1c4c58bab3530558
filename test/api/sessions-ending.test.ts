// How sessions end, through the public surface: past their expires_at, listed and ended, logout scopes
// (with the refresh token too), and what a password change or a deletion does to them. Runs on SQLite,
// and on PostgreSQL with `bun run test:postgres`.
import { describe, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import { expectProblem, type ConfigOverrides } from "../helpers.ts";
import { AUTH, TOKEN_FORMAT, claims, later, sessionsApp } from "../support/sessions.ts";

describe("a session past its expires_at", () => {
  /** The session's access token is refused on REST and GraphQL, and its refresh token too. */
  async function expectEnded(app: Awaited<ReturnType<typeof sessionsApp>>, token: string, refresh: string) {
    const me = await app.me(token);
    expectProblem(me, 401, "unauthorized");
    expect(me.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const graphql = await app.graphql("{ categories { id } }", { token });
    expect(graphql.status).toBe(401);
    expect(graphql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    expectProblem(await app.refresh(refresh), 401, "invalid_refresh_token");
  }

  test("SVC_SESSION_MAX_AGE reached: its access token is refused at once, though the token itself has not expired", async () => {
    const app = await sessionsApp({ sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 60, reuseWindowMs: 10_000 } });
    const { token, refresh, password } = await app.signUp("ann");
    const other = (await app.login("ann", password)).body;
    expect((await app.me(token)).status).toBe(200);
    // Still a second before the limit: nothing ends early.
    expect(await later(59_000, async () => (await app.me(token)).status)).toBe(200);
    await later(60_500, () => expectEnded(app, token, refresh));
    // Moved back, nothing was deleted meanwhile: the check reads the expiry, it did not end the session.
    expect((await app.me(other.token)).status).toBe(200);
  });

  test("the refresh token's lifetime lapsed: the session's access tokens are refused with it", async () => {
    // parseConfig keeps SVC_REFRESH_TTL at least SVC_JWT_TTL; set apart here, the access token would
    // outlive the session, which shows that the check reads the session's expiry whatever set it.
    const app = await sessionsApp({ sessions: { refreshTtlSeconds: 60, maxAgeSeconds: 3600, reuseWindowMs: 10_000 } });
    const { token, refresh } = await app.signUp("ann");
    await later(60_500, () => expectEnded(app, token, refresh));
  });

  test("a refresh moves the expiry on: the new access token works past the old expiry", async () => {
    const app = await sessionsApp({ sessions: { refreshTtlSeconds: 60, maxAgeSeconds: 3600, reuseWindowMs: 10_000 } });
    const { refresh } = await app.signUp("ann");
    const renewed = await later(30_000, async () => (await app.refresh(refresh)).body);
    expect(await later(70_000, async () => (await app.me(renewed.token)).status)).toBe(200);
    await later(91_000, () => expectEnded(app, renewed.token, renewed.refresh_token));
  });

  test("on a database file, where token states are kept in memory between commits: refused all the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-expiry-"));
    const store = openSqliteStore(join(dir, "svc.db"));
    try {
      const app = await sessionsApp(
        { sessions: { refreshTtlSeconds: 3600, maxAgeSeconds: 60, reuseWindowMs: 10_000 } },
        store,
      );
      const { token, refresh } = await app.signUp("ann");
      // Twice: the second answer comes from the state kept since the first.
      expect((await app.me(token)).status).toBe(200);
      expect((await app.me(token)).status).toBe(200);
      await later(60_500, () => expectEnded(app, token, refresh));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("GET and DELETE /auth/sessions", () => {
  test("lists the caller's live sessions newest first, current marked; never another user's", async () => {
    const app = await sessionsApp();
    const { token, password } = await app.signUp("ann");
    const second = (await app.login("ann", password, { "user-agent": "phone" })).body.token;
    const bob = await app.signUp("bob");
    const listed = (await app.sessions(token)).body;
    expect(listed.map((s: { id: string }) => s.id)).toEqual([claims(second).sid, claims(token).sid]);
    expect(listed.map((s: { current: boolean }) => s.current)).toEqual([false, true]);
    expect(listed[0].user_agent).toBe("phone");
    expect((await app.sessions(bob.token)).body).toHaveLength(1);
  });

  test("needs a token: 401", async () => {
    const app = await sessionsApp();
    expectProblem(await app.call("GET", `${AUTH}/sessions`), 401, "unauthorized");
    expectProblem(await app.call("DELETE", `${AUTH}/sessions/${Bun.randomUUIDv7()}`), 401, "unauthorized");
  });

  test("DELETE ends one session at once: its access and refresh tokens stop working, the others go on", async () => {
    const app = await sessionsApp();
    const { token, password } = await app.signUp("ann");
    const phone = (await app.login("ann", password)).body;
    const reply = await app.call("DELETE", `${AUTH}/sessions/${claims(phone.token).sid}`, { token });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe("");
    expectProblem(await app.me(phone.token), 401, "unauthorized");
    expectProblem(await app.refresh(phone.refresh_token), 401, "invalid_refresh_token");
    expect((await app.me(token)).status).toBe(200);
    // A GraphQL request with the ended session's token is refused as well.
    expect((await app.graphql("{ categories { id } }", { token: phone.token })).status).toBe(401);
  });

  test("another user's session, an unknown id or no id at all: 404 not_found, and nothing ends", async () => {
    const app = await sessionsApp();
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    for (const id of [claims(bob.token).sid, Bun.randomUUIDv7(), "not-an-id"]) {
      expectProblem(await app.call("DELETE", `${AUTH}/sessions/${id}`, { token: ann.token }), 404, "not_found");
    }
    expect((await app.me(bob.token)).status).toBe(200);
  });

  test("ending your own current session works like a logout", async () => {
    const app = await sessionsApp();
    const { token } = await app.signUp("ann");
    expect((await app.call("DELETE", `${AUTH}/sessions/${claims(token).sid}`, { token })).status).toBe(204);
    expectProblem(await app.me(token), 401, "unauthorized");
  });
});

describe("POST /auth/logout scopes", () => {
  async function threeSessions() {
    const app = await sessionsApp();
    const { password } = await app.signUp("ann");
    const [a, b, c] = [
      (await app.login("ann", password)).body,
      (await app.login("ann", password)).body,
      (await app.login("ann", password)).body,
    ];
    const alive = async () => Promise.all([a, b, c].map(async (pair) => (await app.me(pair.token)).status === 200));
    return { app, a, b, c, alive };
  }

  test("no body, or local: this session only", async () => {
    const { app, a, b, alive } = await threeSessions();
    expect((await app.call("POST", `${AUTH}/logout`, { token: a.token })).status).toBe(204);
    expect(await alive()).toEqual([false, true, true]);
    expectProblem(await app.refresh(a.refresh_token), 401, "invalid_refresh_token");
    expect((await app.call("POST", `${AUTH}/logout`, { token: b.token, body: { scope: "local" } })).status).toBe(204);
    expect(await alive()).toEqual([false, false, true]);
  });

  test("an empty body sent as JSON is no scope: local", async () => {
    const { app, a, alive } = await threeSessions();
    const reply = await app.call("POST", `${AUTH}/logout`, {
      token: a.token,
      raw: "",
      headers: { "content-type": "application/json" },
    });
    expect(reply.status).toBe(204);
    expect(await alive()).toEqual([false, true, true]);
  });

  test("others: every session but this one", async () => {
    const { app, b, c, alive } = await threeSessions();
    expect((await app.call("POST", `${AUTH}/logout`, { token: b.token, body: { scope: "others" } })).status).toBe(204);
    expect(await alive()).toEqual([false, true, false]);
    expectProblem(await app.refresh(c.refresh_token), 401, "invalid_refresh_token");
    expect((await app.refresh(b.refresh_token)).status).toBe(200);
  });

  test("global: all of them", async () => {
    const { app, c, alive } = await threeSessions();
    expect((await app.call("POST", `${AUTH}/logout`, { token: c.token, body: { scope: "global" } })).status).toBe(204);
    expect(await alive()).toEqual([false, false, false]);
  });

  test("a bad scope or an unknown field: 400 validation_failed naming it, and nothing ends", async () => {
    const { app, a, alive } = await threeSessions();
    const bad = await app.call("POST", `${AUTH}/logout`, { token: a.token, body: { scope: "everywhere" } });
    expectProblem(bad, 400, "validation_failed");
    expect(bad.body.errors).toEqual([{ field: "scope", message: "must be one of local, others, global" }]);
    const unknown = await app.call("POST", `${AUTH}/logout`, { token: a.token, body: { scope: "local", all: true } });
    expectProblem(unknown, 400, "validation_failed");
    expect(unknown.body.errors).toEqual([{ field: "all", message: "is not a known field" }]);
    expectProblem(
      await app.call("POST", `${AUTH}/logout`, { token: a.token, body: ["local"] }),
      400,
      "validation_failed",
    );
    expectProblem(
      await app.call("POST", `${AUTH}/logout`, { token: a.token, raw: "scope=local" }),
      415,
      "unsupported_media_type",
    );
    expect(await alive()).toEqual([true, true, true]);
  });
});

describe("POST /auth/logout with the refresh token: signing out works after the access token expired", () => {
  const ACCESS_EXPIRED = 901_000;

  async function twoSessions(config: ConfigOverrides = {}) {
    const app = await sessionsApp(config);
    const { password } = await app.signUp("ann");
    const [laptop, phone] = [(await app.login("ann", password)).body, (await app.login("ann", password)).body];
    const logout = (body: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) =>
      app.call("POST", `${AUTH}/logout`, { body, ...opts });
    return { app, laptop, phone, logout };
  }

  /** With the clock past the access tokens' 15 minutes (well within the refresh tokens' 30 days). */
  async function idled<T>(work: () => Promise<T>): Promise<T> {
    setSystemTime(new Date(Date.now() + ACCESS_EXPIRED));
    try {
      return await work();
    } finally {
      setSystemTime();
    }
  }

  test("the refresh token in the body ends its session, no Bearer needed; the other sessions go on", async () => {
    const { app, laptop, phone, logout } = await twoSessions();
    await idled(async () => {
      // The hole: the expired access token cannot sign out.
      expectProblem(await logout(undefined, { token: laptop.token }), 401, "unauthorized");
      const reply = await logout({ refresh_token: laptop.refresh_token });
      expect(reply.status).toBe(204);
      expect(reply.text).toBe("");
      expectProblem(await app.refresh(laptop.refresh_token), 401, "invalid_refresh_token");
      expect((await app.refresh(phone.refresh_token)).status).toBe(200);
    });
    expectProblem(await app.me(laptop.token), 401, "unauthorized");
  });

  test("scopes work as with a Bearer token: others, then global", async () => {
    const { app, laptop, phone, logout } = await twoSessions();
    expect((await logout({ refresh_token: laptop.refresh_token, scope: "others" })).status).toBe(204);
    expectProblem(await app.me(phone.token), 401, "unauthorized");
    expect((await app.me(laptop.token)).status).toBe(200);
    expect((await logout({ refresh_token: laptop.refresh_token, scope: "global" })).status).toBe(204);
    expectProblem(await app.me(laptop.token), 401, "unauthorized");
  });

  test("the refresh token decides whose session ends, whatever Authorization header comes with it", async () => {
    const { app, laptop, phone, logout } = await twoSessions();
    expect((await logout({ refresh_token: phone.refresh_token }, { token: laptop.token })).status).toBe(204);
    expectProblem(await app.me(phone.token), 401, "unauthorized");
    expect((await app.me(laptop.token)).status).toBe(200);
    await idled(async () => {
      expect((await logout({ refresh_token: laptop.refresh_token }, { token: laptop.token })).status).toBe(204);
    });
    expectProblem(await app.refresh(laptop.refresh_token), 401, "invalid_refresh_token");
  });

  test("a wrong, malformed, spent or expired refresh token: 401 invalid_refresh_token, and nothing ends", async () => {
    const { app, laptop, phone, logout } = await twoSessions();
    const spent = laptop.refresh_token;
    const successor = (await app.refresh(spent)).body;
    for (const bad of ["A".repeat(43), "short", "", spent]) {
      expectProblem(await logout({ refresh_token: bad }), 401, "invalid_refresh_token");
      // A Bearer token alongside changes nothing: the refresh token named in the body is refused.
      expectProblem(await logout({ refresh_token: bad }, { token: successor.token }), 401, "invalid_refresh_token");
    }
    // Past its 30 days, the session is over, and so is its refresh token.
    setSystemTime(new Date(Date.now() + 31 * 86_400_000));
    try {
      expectProblem(await logout({ refresh_token: phone.refresh_token }), 401, "invalid_refresh_token");
    } finally {
      setSystemTime();
    }
    expect((await app.me(successor.token)).status).toBe(200);
    expect((await app.me(phone.token)).status).toBe(200);
  });

  test("neither a Bearer token nor a refresh token: 401 unauthorized with its challenge", async () => {
    const { app, laptop, logout } = await twoSessions();
    for (const body of [undefined, {}, { scope: "global" }]) {
      const reply = await logout(body);
      expectProblem(reply, 401, "unauthorized");
      expect(reply.headers.get("www-authenticate")).toBe('Bearer realm="svc"');
    }
    expect((await app.me(laptop.token)).status).toBe(200);
  });

  test("unknown fields or a refresh_token that is not a string: 400 validation_failed naming them, and nothing ends", async () => {
    const { app, laptop, logout } = await twoSessions();
    const unknown = await logout({ refresh_token: laptop.refresh_token, session: "all" });
    expectProblem(unknown, 400, "validation_failed");
    expect(unknown.body.errors).toEqual([{ field: "session", message: "is not a known field" }]);
    const typed = await logout({ refresh_token: 42 });
    expectProblem(typed, 400, "validation_failed");
    expect(typed.body.errors).toEqual([{ field: "refresh_token", message: "must be a string" }]);
    expect((await app.me(laptop.token)).status).toBe(200);
    expect((await app.refresh(laptop.refresh_token)).status).toBe(200);
  });

  test("audited as a Bearer logout is: session.revoked by the user, with its scope", async () => {
    const { app, laptop, logout } = await twoSessions();
    const ann = claims(laptop.token).sub;
    expect((await logout({ refresh_token: laptop.refresh_token })).status).toBe(204);
    const [event] = await app.store.audit.list({ action: "session.revoked", limit: 10 });
    expect(event).toMatchObject({ actorId: ann, targetId: ann, outcome: "success", clientAddress: "unknown" });
    expect(JSON.parse(event!.detail!)).toEqual({ scope: "local" });
  });

  test("a repeat under the same Idempotency-Key gets the same 204, though the token is spent", async () => {
    const { logout, laptop } = await twoSessions();
    const headers = { "idempotency-key": "sign-out-1" };
    expect((await logout({ refresh_token: laptop.refresh_token }, { headers })).status).toBe(204);
    const again = await logout({ refresh_token: laptop.refresh_token }, { headers });
    expect(again.status).toBe(204);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expectProblem(await logout({ refresh_token: laptop.refresh_token }), 401, "invalid_refresh_token");
  });

  test("failed attempts count against the client as failed refreshes do: then 429", async () => {
    const loginThrottle = {
      maxFailures: 5,
      backoffBaseMs: 1000,
      backoffMaxMs: 60_000,
      clientMaxFailures: 3,
      clientWindowMs: 60_000,
    };
    const { app, laptop, logout } = await twoSessions({ trustProxy: 1, loginThrottle });
    const headers = { "x-forwarded-for": "198.51.100.1" };
    for (let i = 0; i < 3; i++)
      expectProblem(await logout({ refresh_token: "B".repeat(43) }, { headers }), 401, "invalid_refresh_token");
    expectProblem(await logout({ refresh_token: laptop.refresh_token }, { headers }), 429, "too_many_requests");
    expect((await app.me(laptop.token)).status).toBe(200);
  });
});

describe("a password change and a deletion", () => {
  test("a password change keeps the caller's session with a new pair and ends every other", async () => {
    const app = await sessionsApp();
    const { token, refresh, password } = await app.signUp("ann");
    const phone = (await app.login("ann", password)).body;
    const changed = await app.call("PUT", "/svc-api/v1/users/password", {
      token,
      body: { current_password: password, new_password: "a new secret!" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.refresh_token).toMatch(TOKEN_FORMAT);
    expect(claims(changed.body.token).sid).toBe(claims(token).sid);
    // Every earlier token, this session's included, and every other session are done.
    for (const old of [token, phone.token]) expectProblem(await app.me(old), 401, "unauthorized");
    for (const old of [refresh, phone.refresh_token])
      expectProblem(await app.refresh(old), 401, "invalid_refresh_token");
    const listed = (await app.sessions(changed.body.token)).body;
    expect(listed).toEqual([expect.objectContaining({ id: claims(token).sid, current: true })]);
    const renewed = await app.refresh(changed.body.refresh_token);
    expect(renewed.status).toBe(200);
    expect((await app.me(renewed.body.token)).status).toBe(200);
  });

  test("deleting the account ends every session", async () => {
    const app = await sessionsApp();
    const { token, password } = await app.signUp("ann");
    const phone = (await app.login("ann", password)).body;
    expect((await app.call("DELETE", "/svc-api/v1/users/", { token })).status).toBe(204);
    expectProblem(await app.me(phone.token), 401, "unauthorized");
    expectProblem(await app.refresh(phone.refresh_token), 401, "invalid_refresh_token");
  });
});
