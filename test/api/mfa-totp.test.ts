// The authenticator app and recovery codes as a user sees them (docs/second-factors.md, "What a user
// sees"), and the step-up sensitive changes need.
import { describe, expect, test } from "bun:test";
import { TOTP, URI } from "otpauth";
import { expectProblem } from "../helpers.ts";
import { claims, MFA, mfaApp, VERIFY } from "../support/mfa.ts";

const PASSWORD = "/svc-api/v1/users/password";

describe("enrolling an authenticator app", () => {
  test("GET auth/mfa before: nothing on", async () => {
    const app = await mfaApp();
    const ann = await app.signUp("ann");
    const reply = await app.call("GET", MFA, { token: ann.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      totp: { enabled: false, pending: false, confirmed_at: null },
      passkeys: 0,
      recovery_codes_left: 0,
      methods: [],
    });
    expectProblem(await app.call("GET", MFA), 401, "unauthorized");
  });

  test("POST auth/mfa/totp: a secret, its otpauth URI (issuer, username) and an SVG QR code; pending until confirmed", async () => {
    const app = await mfaApp();
    const ann = await app.signUp("ann");
    const reply = await app.call("POST", `${MFA}/totp`, { token: ann.token });
    expect(reply.status).toBe(201);
    expect(reply.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const totp = URI.parse(reply.body.otpauth_uri) as TOTP;
    expect(totp).toBeInstanceOf(TOTP);
    expect({
      issuer: totp.issuer,
      label: totp.label,
      algorithm: totp.algorithm,
      digits: totp.digits,
      period: totp.period,
      secret: totp.secret.base32,
    }).toEqual({ issuer: "svc", label: "ann", algorithm: "SHA1", digits: 6, period: 30, secret: reply.body.secret });
    expect(reply.body.qr_svg).toStartWith("<svg");
    // The secret is sealed at rest.
    const row = await app.store.mfa.totp(ann.user.id);
    expect(row?.secretSealed).not.toContain(reply.body.secret);
    expect((await app.call("GET", MFA, { token: ann.token })).body.totp).toEqual({
      enabled: false,
      pending: true,
      confirmed_at: null,
    });
    // Still a one-step login while pending.
    const login = await app.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: ann.password },
    });
    expect(login.body.token).toBeString();
  });

  test("confirming: a wrong code 401 invalid_mfa_code; the right one turns it on with ten recovery codes, audited", async () => {
    const app = await mfaApp();
    const ann = await app.signUp("ann");
    const enrolment = await app.call("POST", `${MFA}/totp`, { token: ann.token });
    const totp = URI.parse(enrolment.body.otpauth_uri) as TOTP;
    const right = totp.generate({ timestamp: app.clock.now() });
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, "0");
    const path = `${MFA}/totp/confirm`;
    expectProblem(await app.call("POST", path, { token: ann.token, body: { code: wrong } }), 401, "invalid_mfa_code");
    const confirmed = await app.call("POST", path, { token: ann.token, body: { code: right } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirmed.body.recovery_codes).size).toBe(10);
    const status = (await app.call("GET", MFA, { token: ann.token })).body;
    expect(status).toEqual({
      totp: { enabled: true, pending: false, confirmed_at: new Date(app.clock.now()).toISOString() },
      passkeys: 0,
      recovery_codes_left: 10,
      methods: ["totp", "recovery_code"],
    });
    expect(await app.store.audit.list({ action: "mfa.totp_enrolled", limit: 5 })).toHaveLength(1);
    // Recovery codes are kept as digests only.
    const page = await app.store.mfa.recoveryCodePage(20);
    for (const code of confirmed.body.recovery_codes) expect(JSON.stringify(page)).not.toContain(code);
    // Confirming again: nothing waits.
    expectProblem(await app.call("POST", path, { token: ann.token, body: { code: right } }), 409, "mfa_not_enabled");
  });

  test("confirming with no enrolment waiting: 409 mfa_not_enabled; a new enrolment while one is on: 409 mfa_already_enabled", async () => {
    const app = await mfaApp();
    const bob = await app.signUp("bob");
    expectProblem(
      await app.call("POST", `${MFA}/totp/confirm`, { token: bob.token, body: { code: "123456" } }),
      409,
      "mfa_not_enabled",
    );
    const ann = await app.enrolled("ann");
    expectProblem(await app.call("POST", `${MFA}/totp`, { token: ann.token }), 409, "mfa_already_enabled");
  });

  test("a new enrolment replaces one waiting: the old secret's codes no longer confirm", async () => {
    const app = await mfaApp();
    const ann = await app.signUp("ann");
    const old = URI.parse((await app.call("POST", `${MFA}/totp`, { token: ann.token })).body.otpauth_uri) as TOTP;
    const fresh = URI.parse((await app.call("POST", `${MFA}/totp`, { token: ann.token })).body.otpauth_uri) as TOTP;
    const path = `${MFA}/totp/confirm`;
    expectProblem(
      await app.call("POST", path, { token: ann.token, body: { code: app.codeOf(old) } }),
      401,
      "invalid_mfa_code",
    );
    expect((await app.call("POST", path, { token: ann.token, body: { code: app.codeOf(fresh) } })).status).toBe(200);
  });
});

describe("an enrolment replaced while its code is being confirmed", () => {
  test("confirming A's code after B replaced A: 409 mfa_not_enabled; B still waits, and its own code confirms it", async () => {
    // The new enrolment comes between the confirmation's check of A's code and its write, as a request
    // running at the same moment would.
    let between: (() => Promise<unknown>) | undefined;
    const app = await mfaApp({
      store: (store) => ({
        ...store,
        mfa: {
          ...store.mfa,
          async confirmTotp(...args: Parameters<typeof store.mfa.confirmTotp>) {
            const run = between;
            between = undefined;
            await run?.();
            return store.mfa.confirmTotp(...args);
          },
        },
      }),
    });
    const ann = await app.signUp("ann");
    const enrol = async () => {
      const reply = await app.call("POST", `${MFA}/totp`, { token: ann.token });
      expect(reply.status).toBe(201);
      return URI.parse(reply.body.otpauth_uri) as TOTP;
    };
    const a = await enrol();
    let b: TOTP | undefined;
    between = async () => {
      b = await enrol();
    };
    const path = `${MFA}/totp/confirm`;
    expectProblem(
      await app.call("POST", path, { token: ann.token, body: { code: app.codeOf(a) } }),
      409,
      "mfa_not_enabled",
    );
    expect((await app.call("GET", MFA, { token: ann.token })).body).toMatchObject({
      totp: { enabled: false, pending: true },
      recovery_codes_left: 0,
    });
    expect(await app.store.audit.list({ action: "mfa.totp_enrolled", limit: 5 })).toHaveLength(0);
    expect((await app.call("POST", path, { token: ann.token, body: { code: app.codeOf(b!) } })).status).toBe(200);
  });
});

describe("enrolling an app with another factor on", () => {
  test("with a passkey, enrolling and confirming need a step-up (403 mfa_step_up_required); after one, both pass", async () => {
    const app = await mfaApp();
    const ann = await app.signUp("ann");
    // An enrolment started while no factor was on, then a passkey: the session has shown no factor.
    const started = await app.call("POST", `${MFA}/totp`, { token: ann.token });
    expect(started.status).toBe(201);
    const early = URI.parse(started.body.otpauth_uri) as TOTP;
    const device = await app.addPasskey(ann.token);
    const confirm = (code: string) => app.call("POST", `${MFA}/totp/confirm`, { token: ann.token, body: { code } });
    expectProblem(await confirm(app.codeOf(early)), 403, "mfa_step_up_required");
    expectProblem(await app.call("POST", `${MFA}/totp`, { token: ann.token }), 403, "mfa_step_up_required");
    // Nothing changed: the enrolment still waits, unconfirmed, and the passkey stays.
    expect((await app.call("GET", MFA, { token: ann.token })).body).toMatchObject({
      totp: { enabled: false, pending: true },
      passkeys: 1,
    });

    expect((await app.passkeyStepUp(ann.token, device)).status).toBe(200);
    const fresh = await app.call("POST", `${MFA}/totp`, { token: ann.token });
    expect(fresh.status).toBe(201);
    const confirmed = await confirm(app.codeOf(URI.parse(fresh.body.otpauth_uri) as TOTP));
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recovery_codes).toHaveLength(10);

    // Five minutes on, the step-up has run out again.
    app.clock.pass(301_000);
    expectProblem(
      await app.call("PUT", PASSWORD, {
        token: ann.token,
        body: { current_password: ann.password, new_password: "another good passphrase" },
      }),
      403,
      "mfa_step_up_required",
    );
  });

  test("with no other factor, confirming needs no step-up and counts as one", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    // The confirmation (within the last 5 minutes) stepped the session up: a password change goes through.
    const changed = await app.call("PUT", PASSWORD, {
      token: ann.token,
      body: { current_password: ann.password, new_password: "another good passphrase" },
    });
    expect(changed.status).toBe(200);
  });
});

describe("turning the app off", () => {
  test("with a current code: 204, audited; logins are one step again and the recovery codes are gone", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const reply = await app.call("DELETE", `${MFA}/totp`, { token: ann.token, body: { code: app.codeOf(ann.totp) } });
    expect(reply.status).toBe(204);
    expect(await app.store.audit.list({ action: "mfa.totp_removed", limit: 5 })).toHaveLength(1);
    expect((await app.call("GET", MFA, { token: ann.token })).body).toMatchObject({
      totp: { enabled: false, pending: false },
      recovery_codes_left: 0,
    });
    const login = await app.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: ann.password },
    });
    expect(claims(login.body.token).amr).toEqual(["pwd"]);
    expectProblem(
      await app.call("DELETE", `${MFA}/totp`, { token: ann.token, body: { code: app.codeOf(ann.totp, 30_000) } }),
      409,
      "mfa_not_enabled",
    );
  });

  test("a wrong or replayed code: 401 invalid_mfa_code, nothing changed", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const code = app.codeOf(ann.totp);
    const mfaToken = await app.firstStep("ann", ann.password);
    expect((await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code } })).status).toBe(200);
    expectProblem(
      await app.call("DELETE", `${MFA}/totp`, { token: ann.token, body: { code } }),
      401,
      "invalid_mfa_code",
    );
    expectProblem(
      await app.call("DELETE", `${MFA}/totp`, { token: ann.token, body: { code: "000000" } }),
      401,
      "invalid_mfa_code",
    );
    expect((await app.call("GET", MFA, { token: ann.token })).body.totp.enabled).toBe(true);
  });

  test("with the password: a step-up is needed (403 mfa_step_up_required), then a wrong password 403, the right one 204", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    // The enrolling session showed a code 30 s ago; past the 5 minutes it needs another.
    app.clock.pass(300_000);
    const path = `${MFA}/totp`;
    expectProblem(
      await app.call("DELETE", path, { token: ann.token, body: { password: ann.password } }),
      403,
      "mfa_step_up_required",
    );
    const stepUp = await app.call("POST", VERIFY, { token: ann.token, body: { code: app.codeOf(ann.totp) } });
    expect(stepUp.status).toBe(200);
    expectProblem(
      await app.call("DELETE", path, { token: ann.token, body: { password: "not my password" } }),
      403,
      "current_password_mismatch",
    );
    expectProblem(await app.call("DELETE", path, { token: ann.token, body: {} }), 400, "validation_failed");
    expect((await app.call("DELETE", path, { token: ann.token, body: { password: ann.password } })).status).toBe(204);
  });
});

describe("step-up", () => {
  test("POST auth/mfa/verify with the Bearer: 200 {mfa_at, step_up_until}, 5 minutes on; audited", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    const reply = await app.call("POST", VERIFY, { token: ann.token, body: { code: app.codeOf(ann.totp) } });
    expect(reply.status).toBe(200);
    const at = app.clock.now();
    expect(reply.body).toEqual({
      mfa_at: new Date(at).toISOString(),
      step_up_until: new Date(at + 300_000).toISOString(),
    });
    const [verified] = await app.store.audit.list({ action: "mfa.verified", limit: 1 });
    expect(JSON.parse(verified!.detail!)).toEqual({ method: "totp", purpose: "step_up" });
    const sessions = await app.call("GET", "/svc-api/v1/auth/sessions", { token: ann.token });
    expect(sessions.body.find((s: { current: boolean }) => s.current).mfa_at).toBe(new Date(at).toISOString());
  });

  test("refusals: no Bearer 401 unauthorized, a wrong code 401 invalid_mfa_code, no factor on 409 mfa_not_enabled", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    expectProblem(await app.call("POST", VERIFY, { body: { code: app.codeOf(ann.totp) } }), 401, "unauthorized");
    expectProblem(
      await app.call("POST", VERIFY, { token: ann.token, body: { code: "000000" } }),
      401,
      "invalid_mfa_code",
    );
    const bob = await app.signUp("bob");
    expectProblem(
      await app.call("POST", VERIFY, { token: bob.token, body: { code: "123456" } }),
      409,
      "mfa_not_enabled",
    );
  });

  test("a password change: missing step-up 403; after one, 200; expired again after 5 minutes", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    // A session of a one-step login from before the app was on: it never showed a factor.
    app.clock.pass(300_001);
    const change = (token: string, from: string, to: string) =>
      app.call("PUT", PASSWORD, { token, body: { current_password: from, new_password: to } });
    expectProblem(await change(ann.token, ann.password, "a brand new passphrase"), 403, "mfa_step_up_required");
    const stepped = await app.call("POST", VERIFY, { token: ann.token, body: { code: app.codeOf(ann.totp) } });
    expect(stepped.status).toBe(200);
    app.clock.pass(299_000);
    const changed = await change(ann.token, ann.password, "a brand new passphrase");
    expect(changed.status).toBe(200);
    app.clock.pass(2_000);
    expectProblem(
      await change(changed.body.token, "a brand new passphrase", "yet another passphrase"),
      403,
      "mfa_step_up_required",
    );
  });

  test("an e-mail change needs a step-up; other changes of yourself do not", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    app.clock.pass(300_001);
    const update = (body: Record<string, unknown>) => app.call("PUT", "/svc-api/v1/users", { token: ann.token, body });
    expectProblem(
      await update({ email: "ann2@example.com", current_password: ann.password }),
      403,
      "mfa_step_up_required",
    );
    expect((await update({ username: "annie" })).status).toBe(200);
    expect((await app.call("POST", VERIFY, { token: ann.token, body: { code: app.codeOf(ann.totp) } })).status).toBe(
      200,
    );
    const changed = await update({ email: "ann2@example.com", current_password: ann.password });
    // Mail is on: the change waits for the link mailed to the new address.
    expect(changed.status).toBe(202);
    expect(changed.body.pending_email).toBe("ann2@example.com");
  });

  test("an account without a second factor needs no step-up", async () => {
    const app = await mfaApp();
    const bob = await app.signUp("bob");
    const reply = await app.call("PUT", PASSWORD, {
      token: bob.token,
      body: { current_password: bob.password, new_password: "a brand new passphrase" },
    });
    expect(reply.status).toBe(200);
  });
});

describe("new recovery codes", () => {
  test("need a step-up; then ten new ones, audited, and the old ones stop working", async () => {
    const app = await mfaApp();
    const ann = await app.enrolled("ann");
    app.clock.pass(300_001);
    const path = `${MFA}/recovery-codes`;
    expectProblem(await app.call("POST", path, { token: ann.token }), 403, "mfa_step_up_required");
    const stepUp = await app.call("POST", VERIFY, { token: ann.token, body: { recovery_code: ann.recoveryCodes[0] } });
    expect(stepUp.status).toBe(200);
    const renewed = await app.call("POST", path, { token: ann.token });
    expect(renewed.status).toBe(200);
    expect(renewed.body.recovery_codes).toHaveLength(10);
    expect(await app.store.audit.list({ action: "mfa.recovery_codes_renewed", limit: 5 })).toHaveLength(1);
    expect((await app.call("GET", MFA, { token: ann.token })).body.recovery_codes_left).toBe(10);

    const mfaToken = await app.firstStep("ann", ann.password);
    expectProblem(
      await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, recovery_code: ann.recoveryCodes[1] } }),
      401,
      "invalid_mfa_code",
    );
    const done = await app.call("POST", VERIFY, {
      body: { mfa_token: mfaToken, recovery_code: renewed.body.recovery_codes[0] },
    });
    expect(done.status).toBe(200);
  });

  test("without a factor on: 409 mfa_not_enabled", async () => {
    const app = await mfaApp();
    const bob = await app.signUp("bob");
    expectProblem(await app.call("POST", `${MFA}/recovery-codes`, { token: bob.token }), 409, "mfa_not_enabled");
  });
});
