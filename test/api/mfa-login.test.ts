// The login in two steps (docs/second-factors.md, "Signing in in two steps"): every step, every refusal
// with its status and code, amr in the tokens and the session list.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { blockAfter, expectProblem } from "../helpers.ts";
import { claims, LOGIN, MFA, mfaApp, VERIFY } from "../support/mfa.ts";

const SESSIONS = "/svc-api/v1/auth/sessions";

// The login throttle reckons blocks by the system's time; a test that moves it puts it back.
afterEach(() => setSystemTime());

describe("a login with an authenticator app on", () => {
  test("the right password answers the second step, with no tokens and no cookie", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const reply = await app.call("POST", LOGIN, { body: { username: "ann", password: ann.password } });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      mfa_required: true,
      mfa_token: expect.any(String),
      methods: ["totp", "recovery_code"],
      expires_in: 300,
    });
    expect(reply.headers.getSetCookie()).toEqual([]);
    // A wrong password is still the ordinary 401.
    expectProblem(
      await app.call("POST", LOGIN, { body: { username: "ann", password: "wrong password!" } }),
      401,
      "invalid_credentials",
    );
  });

  test("the code completes it with the pair and the user; amr pwd,otp in every token and in the session list", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    const done = await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(ann.totp) } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ token_type: "Bearer", user: { id: ann.user.id, username: "ann" } });
    expect(typeof done.body.refresh_token).toBe("string");
    expect(claims(done.body.token).amr).toEqual(["pwd", "otp"]);

    const listed = await app.call("GET", SESSIONS, { token: done.body.token });
    const current = listed.body.find((session: { current: boolean }) => session.current);
    expect(current).toMatchObject({ amr: ["pwd", "otp"], mfa_at: new Date(app.clock.now()).toISOString() });
    // The session of the one-step login before the app was on: a password alone.
    expect(listed.body.find((session: { current: boolean }) => !session.current).amr).toEqual(["pwd"]);

    // A refresh keeps the amr.
    const refreshed = await app.call("POST", "/svc-api/v1/auth/refresh", {
      body: { refresh_token: done.body.refresh_token },
    });
    expect(refreshed.status).toBe(200);
    expect(claims(refreshed.body.token).amr).toEqual(["pwd", "otp"]);

    // A password change (stepped up by the login itself) keeps it too.
    const changed = await app.call("PUT", "/svc-api/v1/users/password", {
      token: refreshed.body.token,
      body: { current_password: ann.password, new_password: "another good passphrase" },
    });
    expect(changed.status).toBe(200);
    expect(claims(changed.body.token).amr).toEqual(["pwd", "otp"]);
    const [verified] = await app.store.audit.list({ action: "mfa.verified", limit: 1 });
    expect(JSON.parse(verified!.detail!)).toEqual({ method: "totp", purpose: "login" });
  });

  test("an account without a second factor signs in in one step, amr pwd", async () => {
    const app = await mfaApp();
    const bob = await app.signUp("bob");
    expect(claims(bob.token).amr).toEqual(["pwd"]);
  });

  test("a code of the step before or after is accepted; two steps away is refused", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    for (const offset of [-30_000, 30_000]) {
      app.clock.pass(120_000);
      const mfaToken = await app.firstStep("ann", ann.password);
      const reply = await app.call("POST", VERIFY, {
        body: { mfa_token: mfaToken, code: app.codeOf(ann.totp, offset) },
      });
      expect(reply.status).toBe(200);
    }
    for (const offset of [-60_000, 60_000]) {
      app.clock.pass(120_000);
      const mfaToken = await app.firstStep("ann", ann.password);
      const reply = await app.call("POST", VERIFY, {
        body: { mfa_token: mfaToken, code: app.codeOf(ann.totp, offset) },
      });
      expectProblem(reply, 401, "invalid_mfa_code");
    }
  });

  test("a wrong code: 401 invalid_mfa_code, audited and counted; the mfa_token still works", async () => {
    const app = await mfaApp({ config: { metrics: true } });
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    const right = app.codeOf(ann.totp);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, "0");
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: wrong } }),
      401,
      "invalid_mfa_code",
    );
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: "12ab56" } }),
      401,
      "invalid_mfa_code",
    );
    const [failed] = await app.store.audit.list({ action: "mfa.failed", limit: 1 });
    expect(failed).toMatchObject({ outcome: "failure", targetId: ann.user.id });
    expect(JSON.parse(failed!.detail!)).toEqual({ method: "totp", purpose: "login" });
    expect((await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: right } })).status).toBe(200);

    const metrics = await app.call("GET", "/svc/metrics");
    expect(metrics.text).toContain('svc_mfa_verifications_total{method="totp",outcome="failure",service="svc"} 2');
    expect(metrics.text).toContain('svc_mfa_verifications_total{method="totp",outcome="success",service="svc"} 1');
    expect(metrics.text).toContain('svc_mfa_verifications_total{method="webauthn",outcome="success",service="svc"} 0');
  });

  test("a code used already (the same step again) is refused: 401 invalid_mfa_code", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const code = app.codeOf(ann.totp);
    const first = await app.firstStep("ann", ann.password);
    expect((await app.call("POST", VERIFY, { body: { mfa_token: first, code } })).status).toBe(200);
    const second = await app.firstStep("ann", ann.password);
    expectProblem(await app.call("POST", VERIFY, { body: { mfa_token: second, code } }), 401, "invalid_mfa_code");
    // The next step's code is good.
    app.clock.pass(30_000);
    expect((await app.call("POST", VERIFY, { body: { mfa_token: second, code: app.codeOf(ann.totp) } })).status).toBe(
      200,
    );
  });

  test("an mfa_token used once: 401 invalid_mfa_token", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    expect((await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(ann.totp) } })).status).toBe(
      200,
    );
    app.clock.pass(30_000);
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(ann.totp) } }),
      401,
      "invalid_mfa_token",
    );
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: "no-such-token", code: "123456" } }),
      401,
      "invalid_mfa_token",
    );
  });

  test("an mfa_token older than 5 minutes: 401 mfa_token_expired", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    app.clock.pass(300_000);
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(ann.totp) } }),
      401,
      "mfa_token_expired",
    );
  });

  test("after 5 wrong codes the mfa_token is spent (401 invalid_mfa_token), and the account is throttled", async () => {
    const app = await mfaApp({ config: { loginThrottle: blockAfter(6) } });
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    const wrong = String((Number(app.codeOf(ann.totp)) + 7) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 5; i++)
      expectProblem(
        await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: wrong } }),
        401,
        "invalid_mfa_code",
      );
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(ann.totp) } }),
      401,
      "invalid_mfa_token",
    );
    // The five wrong codes counted as wrong passwords: one more failure and the account is blocked.
    expectProblem(
      await app.call("POST", LOGIN, { body: { username: "ann", password: "a wrong password" } }),
      401,
      "invalid_credentials",
    );
    const blocked = await app.call("POST", LOGIN, { body: { username: "ann", password: ann.password } });
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("wrong codes block the account like wrong passwords: 429 too_many_requests with Retry-After", async () => {
    const app = await mfaApp({ config: { loginThrottle: blockAfter(2) } });
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    const right = app.codeOf(ann.totp);
    const wrong = String((Number(right) + 3) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 2; i++)
      expectProblem(
        await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: wrong } }),
        401,
        "invalid_mfa_code",
      );
    const blocked = await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: right } });
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The step-up is the same account's guess.
    expectProblem(
      await app.call("POST", VERIFY, { token: ann.token, body: { code: right } }),
      429,
      "too_many_requests",
    );
  });

  test("a right password neither counts nor clears wrong codes: login, 4 wrong codes, login… ends in 429", async () => {
    const app = await mfaApp({ config: { loginThrottle: blockAfter(5) } });
    const ann = await app.enrolled("ann");
    const right = app.codeOf(ann.totp);
    const wrong = String((Number(right) + 5) % 1_000_000).padStart(6, "0");
    const guess = (mfaToken: string) => app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: wrong } });
    let mfaToken = await app.firstStep("ann", ann.password);
    for (let i = 0; i < 4; i++) expectProblem(await guess(mfaToken), 401, "invalid_mfa_code");
    // The right password again: a new second step, and the four wrong codes still stand.
    mfaToken = await app.firstStep("ann", ann.password);
    expectProblem(await guess(mfaToken), 401, "invalid_mfa_code");
    const blocked = await guess(mfaToken);
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    const password = await app.call("POST", LOGIN, { body: { username: "ann", password: ann.password } });
    expectProblem(password, 429, "too_many_requests");
    expect(Number(password.headers.get("retry-after"))).toBeGreaterThan(0);

    // Once the block lifts, the right password leads to the second step, and a right code clears the count.
    setSystemTime(new Date(Date.now() + 61_000));
    mfaToken = await app.firstStep("ann", ann.password);
    expect((await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: right } })).status).toBe(200);
    expect(await app.store.throttle.get(`user:${ann.user.id}`)).toBeNull();
  });

  test("a recovery code completes it once (amr pwd,rec; audited with how many remain); used again, 401", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    expect(ann.recoveryCodes).toHaveLength(10);
    for (const code of ann.recoveryCodes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
    const [code] = ann.recoveryCodes;
    const mfaToken = await app.firstStep("ann", ann.password);
    // Case, dashes and spaces do not matter.
    const typed = ` ${code!.toUpperCase().replaceAll("-", " ")} `;
    const done = await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, recovery_code: typed } });
    expect(done.status).toBe(200);
    expect(claims(done.body.token).amr).toEqual(["pwd", "rec"]);
    const [used] = await app.store.audit.list({ action: "mfa.recovery_code_used", limit: 1 });
    expect(JSON.parse(used!.detail!)).toEqual({ remaining: 9 });
    const status = await app.call("GET", MFA, { token: done.body.token });
    expect(status.body.recovery_codes_left).toBe(9);

    const again = await app.firstStep("ann", ann.password);
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: again, recovery_code: code } }),
      401,
      "invalid_mfa_code",
    );
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: again, recovery_code: "not-a-code" } }),
      401,
      "invalid_mfa_code",
    );
  });

  test("a body with none or two of code, recovery_code and webauthn: 400 validation_failed", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    expectProblem(await app.call("POST", VERIFY, { body: { mfa_token: mfaToken } }), 400, "validation_failed");
    expectProblem(
      await app.call("POST", VERIFY, {
        body: { mfa_token: mfaToken, code: app.codeOf(ann.totp), recovery_code: ann.recoveryCodes[0] },
      }),
      400,
      "validation_failed",
    );
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: "123456", extra: 1 } }),
      400,
      "validation_failed",
    );
    // Nothing was spent: the token still completes the login.
    expect((await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(ann.totp) } })).status).toBe(
      200,
    );
  });

  test("webauthn is no method while no passkey code is wired, and its answer is refused: 401 invalid_passkey", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const mfaToken = await app.firstStep("ann", ann.password);
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, webauthn: { id: "x" } } }),
      401,
      "invalid_passkey",
    );
  });
});

describe("a cookie-mode login in two steps", () => {
  const SELF = "http://localhost";

  test("the first step sets no cookie; the second answers as a cookie-mode login does", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const first = await app.call("POST", LOGIN, {
      body: { username: "ann", password: ann.password, mode: "cookie" },
      headers: { origin: SELF },
    });
    expect(first.status).toBe(200);
    expect(first.headers.getSetCookie()).toEqual([]);
    const done = await app.call("POST", VERIFY, {
      body: { mfa_token: first.body.mfa_token, code: app.codeOf(ann.totp) },
      headers: { origin: SELF },
    });
    expect(done.status).toBe(200);
    expect(done.body.refresh_token).toBeUndefined();
    const [cookie] = done.headers.getSetCookie();
    expect(cookie).toStartWith("svc_refresh=");
    expect(cookie).toContain("HttpOnly");
    expect(claims(done.body.token)).toMatchObject({ mode: "cookie", amr: ["pwd", "otp"] });
  });

  test("the second step of a cookie-mode login from a foreign origin: 403 csrf_refused, the token unspent", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const first = await app.call("POST", LOGIN, {
      body: { username: "ann", password: ann.password, mode: "cookie" },
      headers: { origin: SELF },
    });
    const body = { mfa_token: first.body.mfa_token, code: app.codeOf(ann.totp) };
    expectProblem(
      await app.call("POST", VERIFY, { body, headers: { origin: "https://evil.example" } }),
      403,
      "csrf_refused",
    );
    expect((await app.call("POST", VERIFY, { body, headers: { origin: SELF } })).status).toBe(200);
  });
});
