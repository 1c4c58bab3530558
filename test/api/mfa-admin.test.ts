// Administrators and second factors (docs/second-factors.md, "For operators"): SVC_ADMIN_MFA=required holds
// every admin route until the administrator has a factor and the session has shown one, and DELETE
// admin/users/{id}/mfa clears a user's.
import { afterEach, describe, expect, test } from "bun:test";
import { TOTP, URI } from "otpauth";
import type { MfaConfig } from "../../src/config/index.ts";
import { expectProblem, promote } from "../helpers.ts";
import { ADMIN, UUID } from "../support/admin.ts";
import { factorDatabase, type FactorDatabase } from "../support/factor-rows.ts";
import { LOGIN, MFA, mfaApp, VERIFY } from "../support/mfa.ts";
import { hasFactor } from "../../src/auth/mfa/step-up.ts";

let opened: FactorDatabase | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

/** An app on a database of the test's own, with an administrator `root` and a user `ann`. */
async function setup(admin: MfaConfig["admin"] = "optional") {
  opened = await factorDatabase();
  const app = await mfaApp({ on: opened.store, config: { mfa: { admin } } });
  const root = await app.signUp("root");
  await promote(app.store, root.user.id);
  const ann = await app.signUp("ann");
  /** Gives the token's user a passkey, and its session a step-up with it: an administrator let through. */
  const admitted = async (token: string) => {
    const device = await app.addPasskey(token);
    expect((await app.passkeyStepUp(token, device)).status).toBe(200);
    return device;
  };
  return { ...app, root, ann, rows: opened.rows, admitted };
}

describe("SVC_ADMIN_MFA=required", () => {
  test("every admin route answers 403 mfa_enrolment_required to an administrator without a factor", async () => {
    const app = await setup("required");
    const id = app.ann.user.id;
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `${ADMIN}/users`],
      ["GET", `${ADMIN}/users/${id}`],
      ["POST", `${ADMIN}/users`, { username: "x", email: "x@example.com", password: "correct horse battery" }],
      ["PATCH", `${ADMIN}/users/${id}`, { role: "admin" }],
      ["PATCH", `${ADMIN}/users/${id}`, { role: "emperor" }],
      ["DELETE", `${ADMIN}/users/${id}`],
      ["POST", `${ADMIN}/users/${id}/password-reset`],
      ["POST", `${ADMIN}/users/${id}/email-verified`],
      ["DELETE", `${ADMIN}/users/${id}/mfa`],
      ["GET", `${ADMIN}/audit`],
      ["GET", `${ADMIN}/invitations`],
      ["POST", `${ADMIN}/invitations`],
      ["GET", `${ADMIN}/mail`],
      ["GET", `${ADMIN}/backups`],
      ["POST", `${ADMIN}/backups`],
    ];
    for (const [method, path, body] of routes) {
      const reply = await app.call(method, path, { body, token: app.root.token });
      expect({ method, path, status: reply.status, code: reply.body?.code }).toEqual({
        method,
        path,
        status: 403,
        code: "mfa_enrolment_required",
      });
    }
    // A user's token is still refused as before: forbidden, not a hint to enrol.
    expectProblem(await app.call("GET", `${ADMIN}/users`, { token: app.ann.token }), 403, "forbidden");
    // Nothing changed, and the administrator can still use their own account (to enrol a factor).
    expect((await app.call("GET", "/svc-api/v1/users/me", { token: app.ann.token })).body.role).toBe("user");
    expect((await app.call("GET", "/svc-api/v1/users/me", { token: app.root.token })).status).toBe(200);
    expect(await app.store.users.findByLogin("x")).toBeNull();
  });

  test("a confirmed authenticator app or a passkey is a factor, a pending enrolment is not; the session must show one (403 mfa_step_up_required)", async () => {
    const app = await setup("required");
    const users = () => app.call("GET", `${ADMIN}/users`, { token: app.root.token });
    await app.rows.totp(app.root.user.id, false);
    expectProblem(await users(), 403, "mfa_enrolment_required");
    // A factor, but this session signed in with the password before it and has shown none.
    await app.rows.passkey(app.root.user.id);
    expectProblem(await users(), 403, "mfa_step_up_required");

    const other = await app.signUp("other");
    await promote(app.store, other.user.id);
    const theirs = () => app.call("GET", `${ADMIN}/audit`, { token: other.token });
    expectProblem(await theirs(), 403, "mfa_enrolment_required");
    await app.rows.totp(other.user.id, true);
    expectProblem(await theirs(), 403, "mfa_step_up_required");
  });

  test("a passkey added in a session that never showed a factor: 403 mfa_step_up_required until a step-up; a passkey sign-in passes", async () => {
    const app = await setup("required");
    const users = (token: string) => app.call("GET", `${ADMIN}/users`, { token });
    const device = await app.addPasskey(app.root.token);
    expectProblem(await users(app.root.token), 403, "mfa_step_up_required");
    expectProblem(
      await app.call("DELETE", `${ADMIN}/users/${app.ann.user.id}/mfa`, { token: app.root.token }),
      403,
      "mfa_step_up_required",
    );
    expect((await app.passkeyStepUp(app.root.token, device)).status).toBe(200);
    expect((await users(app.root.token)).status).toBe(200);
    // Long after the step-up, the session has still shown a factor: the policy asks for one, not a recent one.
    app.clock.pass(3_600_000);
    expect((await users(app.root.token)).status).toBe(200);

    const options = await app.call("POST", "/svc-api/v1/auth/passkeys/sign-in/options");
    const signedIn = await app.call("POST", "/svc-api/v1/auth/passkeys/sign-in", {
      body: { response: await device.assert(options.body) },
    });
    expect(signedIn.status).toBe(200);
    expect((await users(signedIn.body.token)).status).toBe(200);
  });

  test("an app: the confirming session passes, one signed in before it only after a step-up, a two-step login at once", async () => {
    const app = await setup("required");
    const other = await app.signUp("other");
    await promote(app.store, other.user.id);
    const audit = (token: string) => app.call("GET", `${ADMIN}/audit`, { token });
    // Signed in with the password alone, before the app was on.
    const before = await app.call("POST", LOGIN, { body: { username: "other", password: other.password } });
    expect(before.status).toBe(200);
    const stale = before.body.token as string;

    const enrolment = await app.call("POST", `${MFA}/totp`, { token: other.token });
    const totp = URI.parse(enrolment.body.otpauth_uri) as TOTP;
    const confirmed = await app.call("POST", `${MFA}/totp/confirm`, {
      token: other.token,
      body: { code: app.codeOf(totp) },
    });
    expect(confirmed.status).toBe(200);
    expect((await audit(other.token)).status).toBe(200);

    expectProblem(await audit(stale), 403, "mfa_step_up_required");
    app.clock.pass(30_000);
    expect((await app.call("POST", VERIFY, { token: stale, body: { code: app.codeOf(totp) } })).status).toBe(200);
    expect((await audit(stale)).status).toBe(200);

    app.clock.pass(30_000);
    const mfaToken = await app.firstStep("other", other.password);
    const done = await app.call("POST", VERIFY, { body: { mfa_token: mfaToken, code: app.codeOf(totp) } });
    expect(done.status).toBe(200);
    expect((await audit(done.body.token)).status).toBe(200);
  });

  test("a reset of an administrator's factors holds them again at once", async () => {
    const app = await setup("required");
    await app.admitted(app.root.token);
    const other = await app.signUp("other");
    await promote(app.store, other.user.id);
    await app.rows.totp(other.user.id, true);
    const reset = await app.call("DELETE", `${ADMIN}/users/${other.user.id}/mfa`, { token: app.root.token });
    expect(reset.status).toBe(204);
    expectProblem(await app.call("GET", `${ADMIN}/users`, { token: other.token }), 403, "mfa_enrolment_required");
  });

  test("unset (optional): an administrator without a factor passes", async () => {
    const app = await setup();
    expect((await app.call("GET", `${ADMIN}/users`, { token: app.root.token })).status).toBe(200);
    expect((await app.call("GET", `${ADMIN}/audit`, { token: app.root.token })).status).toBe(200);
  });
});

describe("DELETE admin/users/{id}/mfa", () => {
  test("clears the factors, recovery codes and pending challenges in one change with an mfa.reset event", async () => {
    const app = await setup();
    const ann = app.ann.user.id;
    await app.rows.totp(ann, true);
    await app.rows.passkey(ann);
    await app.rows.passkey(ann);
    await app.rows.extras(ann);
    // Another user's factors stay.
    await app.rows.passkey(app.root.user.id);
    expect(await app.rows.count(ann)).toEqual({
      mfa_totp: 1,
      mfa_recovery_codes: 3,
      passkeys: 2,
      mfa_challenges: 1,
      webauthn_challenges: 1,
    });

    const reset = await app.call("DELETE", `${ADMIN}/users/${ann}/mfa`, {
      token: app.root.token,
      headers: { "x-request-id": "req-reset-1" },
    });
    expect(reset.status).toBe(204);
    expect(reset.text).toBe("");
    expect(await app.rows.count(ann)).toEqual({
      mfa_totp: 0,
      mfa_recovery_codes: 0,
      passkeys: 0,
      mfa_challenges: 0,
      webauthn_challenges: 0,
    });
    expect(hasFactor(await app.store.mfa.factors(ann))).toBe(false);
    expect(hasFactor(await app.store.mfa.factors(app.root.user.id))).toBe(true);
    // The user's sessions stay: a reset is for a user who lost their phone, not a break-in.
    expect((await app.call("GET", "/svc-api/v1/users/me", { token: app.ann.token })).status).toBe(200);

    const events = await app.call("GET", `${ADMIN}/audit?action=mfa.reset`, { token: app.root.token });
    expect(events.body).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(UUID),
        action: "mfa.reset",
        actor_id: app.root.user.id,
        target_id: ann,
        detail: { client_request_id: "req-reset-1" },
        outcome: "success",
      }),
    ]);

    // Again, on a user without factors: the same answer, and one more event.
    expect((await app.call("DELETE", `${ADMIN}/users/${ann}/mfa`, { token: app.root.token })).status).toBe(204);
    expect((await app.call("GET", `${ADMIN}/audit?action=mfa.reset`, { token: app.root.token })).body).toHaveLength(2);
  });

  test("404 not_found for an unknown user or an id that is none; 403 forbidden for a user; 401 without a token", async () => {
    const app = await setup();
    const ann = app.ann.user.id;
    await app.rows.passkey(ann);
    expectProblem(
      await app.call("DELETE", `${ADMIN}/users/0190a3f0-0000-7000-8000-000000000000/mfa`, { token: app.root.token }),
      404,
      "not_found",
    );
    expectProblem(await app.call("DELETE", `${ADMIN}/users/nobody/mfa`, { token: app.root.token }), 404, "not_found");
    expectProblem(await app.call("DELETE", `${ADMIN}/users/${ann}/mfa`, { token: app.ann.token }), 403, "forbidden");
    expectProblem(await app.call("DELETE", `${ADMIN}/users/${ann}/mfa`), 401, "unauthorized");
    expect((await app.rows.count(ann)).passkeys).toBe(1);
    expect((await app.call("GET", `${ADMIN}/audit?action=mfa.reset`, { token: app.root.token })).body).toEqual([]);
  });
});
