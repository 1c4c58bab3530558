// An app on a clock the test moves (second factors keep time by it: TOTP steps, mfa_token and step-up
// expiry), and a user with an authenticator app on, whose codes the test computes with otpauth from the
// enrolment's URI as any app would.
import { expect } from "bun:test";
import { TOTP, URI } from "otpauth";
import { relyingParty } from "../../src/auth/passkeys/relying-party.ts";
import { ManualClock } from "../backup-clock.ts";
import { testApp, type TestAppOptions } from "../helpers.ts";
import { SoftwareAuthenticator } from "./webauthn-authenticator.ts";

// The claims of a JWT, unverified: the session tests' own, for the tests that import them from here.
export { claims } from "./sessions.ts";

export const MFA = "/svc-api/v1/auth/mfa";
export const LOGIN = "/svc-api/v1/auth/login";
export const VERIFY = `${MFA}/verify`;

export async function mfaApp(options: TestAppOptions = {}) {
  const clock = new ManualClock(Date.parse("2026-11-26T12:00:10Z"));
  const app = await testApp({ ...options, clock });

  /** A new user with an authenticator app on: its TOTP, the recovery codes, and a token of the enrolling session. */
  async function enrolled(name?: string) {
    const user = await app.signUp(name);
    const enrolment = await app.call("POST", `${MFA}/totp`, { token: user.token });
    expect(enrolment.status).toBe(201);
    const totp = URI.parse(enrolment.body.otpauth_uri) as TOTP;
    const confirmed = await app.call("POST", `${MFA}/totp/confirm`, {
      token: user.token,
      body: { code: totp.generate({ timestamp: clock.now() }) },
    });
    expect(confirmed.status).toBe(200);
    // The confirming code's step is spent: a login's code comes from the next one.
    clock.pass(30_000);
    return { ...user, totp, recoveryCodes: confirmed.body.recovery_codes as string[] };
  }

  /** The code the app shows `offsetMs` from the clock's now. */
  const codeOf = (totp: TOTP, offsetMs = 0) => totp.generate({ timestamp: clock.now() + offsetMs });

  /** The first step of a login: the right password, answered with the second step. */
  async function firstStep(username: string, password: string, extra: Record<string, unknown> = {}, headers = {}) {
    const reply = await app.call("POST", LOGIN, { body: { username, password, ...extra }, headers });
    expect(reply.status).toBe(200);
    expect(reply.body.mfa_required).toBe(true);
    return reply.body.mfa_token as string;
  }

  /** Adds a passkey for the token's user, made by a software authenticator on svc's origin; the authenticator. */
  async function addPasskey(token: string) {
    const device = new SoftwareAuthenticator(relyingParty(app.config.mail).origin);
    const options = await app.call("POST", "/svc-api/v1/auth/passkeys/options", { token });
    expect(options.status).toBe(200);
    const added = await app.call("POST", "/svc-api/v1/auth/passkeys", {
      token,
      body: { response: await device.register(options.body) },
    });
    expect(added.status).toBe(201);
    return device;
  }

  /** A step-up in the token's session with the passkey `device` holds. */
  async function passkeyStepUp(token: string, device: SoftwareAuthenticator) {
    const options = await app.call("POST", `${MFA}/webauthn/options`, { token });
    expect(options.status).toBe(200);
    return app.call("POST", VERIFY, { token, body: { webauthn: await device.assert(options.body) } });
  }

  return { ...app, clock, enrolled, codeOf, firstStep, addPasskey, passkeyStepUp };
}
