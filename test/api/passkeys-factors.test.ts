// Passkeys among the second factors, through the public surface with a software authenticator standing in for
// the browser: adding one to an account with a factor on needs a step-up, removing the last factor takes the
// recovery codes with it, and the passkey as a second factor (PasskeyFactor) as the second-factor code calls
// it. On an app whose clock the test moves (test/support/mfa.ts). Runs on SQLite, and on PostgreSQL with
// TEST_DATABASE=postgres.
import { describe, expect, test } from "bun:test";
import { createPasskeyFactor } from "../../src/auth/passkeys/index.ts";
import { relyingParty } from "../../src/auth/passkeys/relying-party.ts";
import { AppError } from "../../src/errors/index.ts";
import { expectProblem } from "../helpers.ts";
import { MFA, mfaApp, VERIFY } from "../support/mfa.ts";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.ts";

const BASE = "/svc-api/v1/auth/passkeys";

async function factorsApp() {
  const app = await mfaApp();
  const rp = relyingParty(app.config.mail);
  /** A browser on svc's public origin, with its own authenticator. */
  const device = () => new SoftwareAuthenticator(rp.origin);
  const registrationOptions = async (token: string) => {
    const reply = await app.call("POST", `${BASE}/options`, { token });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  /** Registers a passkey on `authenticator` for the token's user; the reply. */
  async function register(token: string, authenticator: SoftwareAuthenticator) {
    const response = await authenticator.register(await registrationOptions(token));
    return app.call("POST", BASE, { token, body: { response } });
  }
  const list = async (token: string) => (await app.call("GET", BASE, { token })).body.items as { id: string }[];
  /** A new session signed in with the passkey alone (which counts as a second factor shown). */
  async function passkeySession(authenticator: SoftwareAuthenticator) {
    const options = (await app.call("POST", `${BASE}/sign-in/options`)).body;
    const reply = await app.call("POST", `${BASE}/sign-in`, {
      body: { response: await authenticator.assert(options) },
    });
    expect(reply.status).toBe(200);
    return reply.body.token as string;
  }
  /** A step-up with one of the token's user's passkeys (on `authenticator`), as a browser does it. */
  async function stepUp(token: string, authenticator: SoftwareAuthenticator) {
    const options = await app.call("POST", `${MFA}/webauthn/options`, { token });
    expect(options.status).toBe(200);
    const reply = await app.call("POST", VERIFY, {
      token,
      body: { webauthn: await authenticator.assert(options.body) },
    });
    expect(reply.status).toBe(200);
  }
  return { ...app, rp, device, registrationOptions, register, list, passkeySession, stepUp };
}

describe("adding a passkey with a second factor on needs a step-up", () => {
  test("with a passkey: options and answer are 403 mfa_step_up_required until the session steps up", async () => {
    const { register, device, call, list, registrationOptions, passkeySession, stepUp, signUp } = await factorsApp();
    const ann = await signUp("ann");
    const laptop = device();
    // The first passkey of an account without a factor needs none.
    expect((await register(ann.token, laptop)).status).toBe(201);
    // A stolen Bearer (a password's session, no factor shown) adds no passkey of its own.
    expectProblem(await call("POST", `${BASE}/options`, { token: ann.token }), 403, "mfa_step_up_required");
    // Nor with an answer to options another session of ann's was given (one the passkey signed in).
    const other = await passkeySession(laptop);
    const response = await device().register(await registrationOptions(other));
    expectProblem(await call("POST", BASE, { token: ann.token, body: { response } }), 403, "mfa_step_up_required");
    expect(await list(ann.token)).toHaveLength(1);
    // Stepped up, the same session adds one.
    await stepUp(ann.token, laptop);
    expect((await register(ann.token, device())).status).toBe(201);
    expect(await list(ann.token)).toHaveLength(2);
  });

  test("with an authenticator app: 403 mfa_step_up_required past the 5 minutes, 201 after a code", async () => {
    const { enrolled, clock, call, codeOf, device, list } = await factorsApp();
    const cat = await enrolled("cat");
    clock.pass(300_001);
    expectProblem(await call("POST", `${BASE}/options`, { token: cat.token }), 403, "mfa_step_up_required");
    expect((await call("POST", VERIFY, { token: cat.token, body: { code: codeOf(cat.totp) } })).status).toBe(200);
    const options = await call("POST", `${BASE}/options`, { token: cat.token });
    expect(options.status).toBe(200);
    const response = await device().register(options.body);
    // The answer is held to the step-up as the options are: past it, refused and nothing added.
    clock.pass(300_001);
    expectProblem(await call("POST", BASE, { token: cat.token, body: { response } }), 403, "mfa_step_up_required");
    expect(await list(cat.token)).toEqual([]);
    expect((await call("POST", VERIFY, { token: cat.token, body: { code: codeOf(cat.totp) } })).status).toBe(200);
    expect((await call("POST", BASE, { token: cat.token, body: { response } })).status).toBe(201);
  });
});

describe("removing the last factor", () => {
  test("the last passkey, the app off: the recovery codes go too, and sign in no more", async () => {
    const { enrolled, call, codeOf, device, register, firstStep } = await factorsApp();
    const cat = await enrolled("cat");
    const status = async () => (await call("GET", MFA, { token: cat.token })).body;
    const add = async () => {
      const added = await register(cat.token, device());
      expect(added.status).toBe(201);
      return added.body.id as string;
    };
    // The enrolling session showed a code: it adds two passkeys, then turns the app off with a code.
    const [first, second] = [await add(), await add()];
    const off = await call("DELETE", `${MFA}/totp`, { token: cat.token, body: { code: codeOf(cat.totp) } });
    expect(off.status).toBe(204);
    expect((await status()).recovery_codes_left).toBe(10);
    // A passkey left: the codes stay.
    expect((await call("DELETE", `${BASE}/${first}`, { token: cat.token })).status).toBe(204);
    expect((await status()).recovery_codes_left).toBe(10);
    // None left: they go with it.
    expect((await call("DELETE", `${BASE}/${second}`, { token: cat.token })).status).toBe(204);
    expect(await status()).toMatchObject({ passkeys: 0, recovery_codes_left: 0, methods: [] });

    // A passkey again, later: the old codes do not come back with it.
    await add();
    const mfaToken = await firstStep("cat", cat.password);
    expectProblem(
      await call("POST", VERIFY, { body: { mfa_token: mfaToken, recovery_code: cat.recoveryCodes[0] } }),
      401,
      "invalid_mfa_code",
    );
  });

  test("the last passkey with the app on: the recovery codes stay", async () => {
    const { enrolled, call, device, register } = await factorsApp();
    const cat = await enrolled("cat");
    const added = await register(cat.token, device());
    expect(added.status).toBe(201);
    expect((await call("DELETE", `${BASE}/${added.body.id}`, { token: cat.token })).status).toBe(204);
    expect((await call("GET", MFA, { token: cat.token })).body.recovery_codes_left).toBe(10);
  });
});

describe("a passkey as the second factor (PasskeyFactor)", () => {
  test("options allow the user's passkeys only; none without any", async () => {
    const { register, device, signUp, store, rp } = await factorsApp();
    const [ann, bob] = [await signUp("ann"), await signUp("bob")];
    const factor = createPasskeyFactor({ passkeys: store.passkeys, rp });
    const laptop = device();
    await register(ann.token, laptop);
    expect(await factor.assertionOptions(bob.user.id)).toBeNull();
    const asked = await factor.assertionOptions(ann.user.id);
    expect(asked!.options.allowCredentials).toEqual([
      { id: laptop.credentials[0]!.id, type: "public-key", transports: ["internal"] },
    ]);
    expect(asked!.challenge).toBe(asked!.options.challenge);
  });

  test("its answer holds for its owner only, and its use is recorded; refusals are invalid_passkey", async () => {
    const { register, device, signUp, store, rp } = await factorsApp();
    const [ann, bob] = [await signUp("ann"), await signUp("bob")];
    const factor = createPasskeyFactor({ passkeys: store.passkeys, rp });
    const laptop = device();
    await register(ann.token, laptop);
    const refusal = async (work: Promise<void>) => {
      const error = await work.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("invalid_passkey");
    };
    const { options, challenge } = (await factor.assertionOptions(ann.user.id))!;
    // Another user's passkey: ann's answer offered as bob's second factor.
    await refusal(factor.verifyAssertion(bob.user.id, await laptop.assert(options), challenge));
    await refusal(factor.verifyAssertion(ann.user.id, await laptop.assert(options), "another-challenge"));
    await refusal(factor.verifyAssertion(ann.user.id, await laptop.assert(options, { badSignature: true }), challenge));
    await refusal(factor.verifyAssertion(ann.user.id, { nonsense: true }, challenge));
    const answer = await laptop.assert(options);
    await factor.verifyAssertion(ann.user.id, answer, challenge);
    expect((await store.passkeys.list(ann.user.id))[0]!.lastUsedAt).toBeString();
    // The same answer again: its counter did not move.
    await refusal(factor.verifyAssertion(ann.user.id, answer, challenge));
  });
});
