import { describe, expect, test } from "bun:test";
import { expectProblem, testApp, type TestAppOptions } from "../helpers.ts";

const LOGIN = "/svc-api/v1/auth/login";
const REFRESH = "/svc-api/v1/auth/refresh";
const LOGOUT = "/svc-api/v1/auth/logout";
const PASSWORD = "/svc-api/v1/users/password";
const SELF = "http://localhost";
const APP = "https://app.example.com";
/** What a page's fetch sends with the cookie: its origin, and a JSON body (a form cannot). */
const FROM_PAGE = { origin: SELF, "content-type": "application/json" };

async function cookieApp(options: TestAppOptions = {}) {
  const t = await testApp(options);
  const { user, password } = await t.signUp("ann");
  const loginReply = (headers: Record<string, string> = { origin: SELF }) =>
    t.call("POST", LOGIN, { body: { username: "ann", password, mode: "cookie" }, headers });
  /** A cookie-mode login: the reply and the refresh cookie it set. */
  async function login() {
    const reply = await loginReply();
    return { reply, cookie: refreshCookie(reply.headers) };
  }
  /** A refresh by the cookie, as a page sends it. */
  const refresh = (cookie: string, headers: Record<string, string> = FROM_PAGE) =>
    t.call("POST", REFRESH, { headers: { ...headers, cookie: `svc_refresh=${cookie}` } });
  return { ...t, user, password, login, loginReply, refresh };
}

/** The refresh cookie a reply set: its value and attributes. */
function refreshCookie(headers: Headers) {
  const set = headers.getSetCookie();
  expect(set).toHaveLength(1);
  return Bun.Cookie.parse(set[0]!);
}

describe("cookie sessions", () => {
  test("a cookie-mode login answers the access token and puts the refresh token in an HttpOnly cookie", async () => {
    const { login, call, config } = await cookieApp();
    const { reply, cookie } = await login();
    expect(reply.status).toBe(200);
    expect(reply.body.token).toBeString();
    expect(reply.body.refresh_token).toBeUndefined();
    expect(reply.body.refresh_expires_in).toBe(config.sessions.refreshTtlSeconds);
    expect(cookie.name).toBe("svc_refresh");
    expect(cookie.value.length).toBeGreaterThan(20);
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.secure).toBe(false);
    expect(cookie.sameSite).toBe("strict");
    expect(cookie.path).toBe("/svc-api/v1/auth");
    expect(cookie.maxAge).toBe(config.sessions.refreshTtlSeconds);
    // users/me works the same with the access token.
    const me = await call("GET", "/svc-api/v1/users/me", { token: reply.body.token });
    expect(me.status).toBe(200);
    expect(me.body.username).toBe("ann");
  });

  test("json mode (the default) answers as before: the refresh token in the body, no cookie", async () => {
    const { call, password } = await cookieApp();
    for (const body of [
      { username: "ann", password },
      { username: "ann", password, mode: "json" },
    ]) {
      const reply = await call("POST", LOGIN, { body });
      expect(reply.status).toBe(200);
      expect(reply.body.refresh_token).toBeString();
      expect(reply.headers.getSetCookie()).toEqual([]);
    }
  });

  test("over HTTPS the cookie is __Host-svc_refresh, Secure, Path=/ (what the prefix demands)", async () => {
    const { app, password } = await cookieApp();
    const response = await app.handle(
      new Request("https://svc.example.com/svc-api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://svc.example.com" },
        body: JSON.stringify({ username: "ann", password, mode: "cookie" }),
      }),
    );
    expect(response.status).toBe(200);
    const cookie = refreshCookie(response.headers);
    expect(cookie.name).toBe("__Host-svc_refresh");
    expect(cookie.secure).toBe(true);
    expect(cookie.path).toBe("/");
    // Refreshed over HTTPS by the __Host- cookie; a plain svc_refresh one (plantable by a sibling host) is not read.
    const refresh = (cookieHeader: string) =>
      app.handle(
        new Request("https://svc.example.com/svc-api/v1/auth/refresh", {
          method: "POST",
          headers: { "content-type": "application/json", origin: "https://svc.example.com", cookie: cookieHeader },
        }),
      );
    expect((await refresh(`svc_refresh=${cookie.value}`)).status).toBe(400);
    const renewed = await refresh(`__Host-svc_refresh=${cookie.value}`);
    expect(renewed.status).toBe(200);
    expect(refreshCookie(renewed.headers).name).toBe("__Host-svc_refresh");
  });

  test("behind a trusted proxy, X-Forwarded-Proto: https makes the cookie secure", async () => {
    const { call, password } = await cookieApp({ config: { trustProxy: 1 } });
    const reply = await call("POST", LOGIN, {
      body: { username: "ann", password, mode: "cookie" },
      headers: {
        "x-forwarded-proto": "https",
        "x-forwarded-host": "svc.example.com",
        origin: "https://svc.example.com",
      },
    });
    expect(reply.status).toBe(200);
    expect(refreshCookie(reply.headers).name).toBe("__Host-svc_refresh");
  });

  test("refresh with no body takes the cookie, rotates it, and answers the pair without the refresh token", async () => {
    const { login, refresh, call } = await cookieApp();
    const { cookie } = await login();
    const renewed = await refresh(cookie.value);
    expect(renewed.status).toBe(200);
    expect(renewed.body.token).toBeString();
    expect(renewed.body.refresh_token).toBeUndefined();
    expect(renewed.body.user.username).toBe("ann");
    const next = refreshCookie(renewed.headers);
    expect(next.value).not.toBe(cookie.value);
    expect(next.httpOnly).toBe(true);
    // The successor works; the access token too.
    expect((await refresh(next.value)).status).toBe(200);
    expect((await call("GET", "/svc-api/v1/users/me", { token: renewed.body.token })).status).toBe(200);
  });

  test("a refresh token in the body still wins, answered in the body", async () => {
    const { call, signUp } = await cookieApp();
    const { refresh } = await signUp("bob");
    const reply = await call("POST", REFRESH, { body: { refresh_token: refresh } });
    expect(reply.status).toBe(200);
    expect(reply.body.refresh_token).toBeString();
    expect(reply.headers.getSetCookie()).toEqual([]);
  });

  test("refresh with neither a body token nor the cookie: 400 validation_failed naming refresh_token", async () => {
    const { call } = await cookieApp();
    const reply = await call("POST", REFRESH, { headers: FROM_PAGE });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors[0].field).toBe("refresh_token");
    expectProblem(await call("POST", REFRESH, { body: { refresh_token: 5 } }), 400, "validation_failed");
    expectProblem(await call("POST", REFRESH, { body: { other: "x" } }), 400, "validation_failed");
  });

  test("an unknown cookie: 401 invalid_refresh_token, and the cookie is cleared", async () => {
    const { refresh } = await cookieApp();
    const reply = await refresh("not-a-token-svc-issued-0123456789");
    expectProblem(reply, 401, "invalid_refresh_token");
    const cleared = refreshCookie(reply.headers);
    expect(cleared.value).toBe("");
    expect(cleared.maxAge).toBe(0);
  });

  test("two refresh cookies (one planted from a sibling subdomain): 403 csrf_refused, neither is used", async () => {
    // Over plain HTTP no prefix stops a sibling host setting svc_refresh for the parent domain; the
    // browser then sends both, and taking the first would sign the victim into the planter's session.
    const { login, call, signUp } = await cookieApp();
    const { cookie } = await login();
    const planted = (await signUp("mallory")).refresh;
    for (const pair of [
      `svc_refresh=${planted}; svc_refresh=${cookie.value}`,
      `svc_refresh=${cookie.value}; svc_refresh=${planted}`,
    ]) {
      const refreshed = await call("POST", REFRESH, { headers: { ...FROM_PAGE, cookie: pair } });
      expectProblem(refreshed, 403, "csrf_refused");
      expect(refreshed.body.detail).toContain("two");
      expect(refreshed.headers.getSetCookie()).toEqual([]);
      expectProblem(await call("POST", LOGOUT, { headers: { ...FROM_PAGE, cookie: pair } }), 403, "csrf_refused");
    }
    // Both sessions are untouched: each cookie alone still refreshes.
    expect(
      (await call("POST", REFRESH, { headers: { ...FROM_PAGE, cookie: `svc_refresh=${cookie.value}` } })).status,
    ).toBe(200);
    expect((await call("POST", REFRESH, { body: { refresh_token: planted } })).status).toBe(200);
  });

  test("a production svc behind a trusted proxy warns once when the proxy sends no X-Forwarded-Proto", async () => {
    const { call, logs } = await cookieApp({ config: { env: "production", trustProxy: 1 } });
    const forwarded = { "x-forwarded-for": "203.0.113.9" };
    await call("GET", "/svc/health", { headers: forwarded });
    await call("GET", "/svc/health", { headers: forwarded });
    // A request straight to svc (a load balancer's probe) says nothing of the proxy.
    await call("GET", "/svc/health");
    const warnings = (await logs())
      .map((line) => JSON.parse(line))
      .filter((line) => /X-Forwarded-Proto/.test(line.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].level).toBe("warn");
  });

  test("behind a trusted proxy that sends X-Forwarded-Proto, or outside production, nothing is said", async () => {
    for (const [config, headers] of [
      [
        { env: "production", trustProxy: 1 },
        { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" },
      ],
      [{ env: "development", trustProxy: 1 }, { "x-forwarded-for": "203.0.113.9" }],
      [{ env: "production", trustProxy: 0 }, { "x-forwarded-for": "203.0.113.9" }],
    ] as const) {
      const { call, logs } = await testApp({ config });
      await call("GET", "/svc/health", { headers });
      expect((await logs()).filter((line) => line.includes("X-Forwarded-Proto"))).toEqual([]);
    }
  });

  test("a mode that is neither json nor cookie: 400 validation_failed naming mode", async () => {
    const { call, password } = await cookieApp();
    const reply = await call("POST", LOGIN, { body: { username: "ann", password, mode: "session" } });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors[0].field).toBe("mode");
  });
});

describe("CSRF: a request the cookie authenticates", () => {
  test("without an Origin header: 403 csrf_refused, and the cookie still works", async () => {
    const { login, refresh } = await cookieApp();
    const { cookie } = await login();
    expectProblem(await refresh(cookie.value, { "content-type": "application/json" }), 403, "csrf_refused");
    expect((await refresh(cookie.value)).status).toBe(200);
  });

  test("from an unlisted origin: 403 csrf_refused; from a listed one: allowed", async () => {
    const { login, refresh } = await cookieApp({ config: { corsOrigins: [APP] } });
    const { cookie } = await login();
    const evil = await refresh(cookie.value, { origin: "https://evil.example", "content-type": "application/json" });
    expectProblem(evil, 403, "csrf_refused");
    expect(evil.headers.getSetCookie()).toEqual([]);
    const listed = await refresh(cookie.value, { origin: APP, "content-type": "application/json" });
    expect(listed.status).toBe(200);
  });

  test("a request a form could send (no JSON type, no custom header): 403 csrf_refused", async () => {
    const { login, refresh } = await cookieApp();
    const { cookie } = await login();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      expectProblem(await refresh(cookie.value, { origin: SELF, "content-type": type }), 403, "csrf_refused");
    }
    expectProblem(await refresh(cookie.value, { origin: SELF }), 403, "csrf_refused");
    // A custom header only a script can send is enough.
    expect((await refresh(cookie.value, { origin: SELF, "x-request-id": "page-1" })).status).toBe(200);
  });

  test("a cookie-mode login from an unlisted origin: 403 csrf_refused, no cookie set", async () => {
    const { loginReply } = await cookieApp();
    const reply = await loginReply({ origin: "https://evil.example" });
    expectProblem(reply, 403, "csrf_refused");
    expect(reply.headers.getSetCookie()).toEqual([]);
  });

  test("logout by the cookie from another origin: 403 csrf_refused, and the session lives on", async () => {
    const { login, refresh, call } = await cookieApp();
    const { cookie } = await login();
    const refused = await call("POST", LOGOUT, {
      headers: {
        origin: "https://evil.example",
        "content-type": "application/json",
        cookie: `svc_refresh=${cookie.value}`,
      },
    });
    expectProblem(refused, 403, "csrf_refused");
    expect((await refresh(cookie.value)).status).toBe(200);
  });
});

describe("logout and password change in cookie mode", () => {
  test("logout with only the cookie ends the session and clears the cookie, with no access token (so after it expired too)", async () => {
    const { login, refresh, call } = await cookieApp();
    const { cookie } = await login();
    const out = await call("POST", LOGOUT, { headers: { ...FROM_PAGE, cookie: `svc_refresh=${cookie.value}` } });
    expect(out.status).toBe(204);
    const cleared = refreshCookie(out.headers);
    expect(cleared.value).toBe("");
    expect(cleared.maxAge).toBe(0);
    expectProblem(await refresh(cookie.value), 401, "invalid_refresh_token");
  });

  test("logout of the other sessions by the cookie keeps this one, and its cookie", async () => {
    const { login, refresh, call } = await cookieApp();
    const { cookie } = await login();
    const other = await login();
    const out = await call("POST", LOGOUT, {
      body: { scope: "others" },
      headers: { origin: SELF, cookie: `svc_refresh=${cookie.value}` },
    });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()).toEqual([]);
    expect((await refresh(cookie.value)).status).toBe(200);
    expectProblem(await refresh(other.cookie.value), 401, "invalid_refresh_token");
  });

  test("a password change in a cookie session answers its new refresh token in the cookie, kept for a retry", async () => {
    const { login, refresh, call, password } = await cookieApp();
    const { reply, cookie } = await login();
    const change = () =>
      call("PUT", PASSWORD, {
        token: reply.body.token,
        body: { current_password: password, new_password: "a brand new passphrase" },
        headers: { "idempotency-key": "change-1" },
      });
    const changed = await change();
    expect(changed.status).toBe(200);
    expect(changed.body.refresh_token).toBeUndefined();
    const renewed = refreshCookie(changed.headers);
    expect(renewed.value).not.toBe(cookie.value);
    // A retry that lost the first answer gets the same cookie again.
    const again = await change();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(refreshCookie(again.headers).value).toBe(renewed.value);
    expect((await refresh(renewed.value)).status).toBe(200);
  });

  test("a password change in a json session answers as before, with no cookie", async () => {
    const { signUp, call } = await cookieApp();
    const bob = await signUp("bob");
    const changed = await call("PUT", PASSWORD, {
      token: bob.token,
      body: { current_password: bob.password, new_password: "a brand new passphrase" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.refresh_token).toBeString();
    expect(changed.headers.getSetCookie()).toEqual([]);
  });
});

describe("many tabs, one cookie", () => {
  test("tabs refreshing at once with the same cookie all stay signed in, and so does the next refresh", async () => {
    const { login, refresh } = await cookieApp();
    const { cookie } = await login();
    const tabs = await Promise.all([1, 2, 3, 4].map(() => refresh(cookie.value)));
    for (const tab of tabs) expect(tab.status).toBe(200);
    // They were all given the one successor, which the browser then holds.
    const successors = new Set(tabs.map((tab) => refreshCookie(tab.headers).value));
    expect(successors.size).toBe(1);
    const [successor] = [...successors];
    expect((await refresh(successor!)).status).toBe(200);
  });

  test("a tab whose request left with the old cookie before another tab's rotation still gets the new pair", async () => {
    const { login, refresh } = await cookieApp();
    const { cookie } = await login();
    const first = await refresh(cookie.value);
    const late = await refresh(cookie.value);
    expect(late.status).toBe(200);
    expect(refreshCookie(late.headers).value).toBe(refreshCookie(first.headers).value);
  });
});
