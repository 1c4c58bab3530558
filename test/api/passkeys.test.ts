// Passkeys through the public surface, with a software authenticator standing in for the browser: register,
// list, rename, remove, sign in with a passkey alone, and every refusal with its exact status and code (with
// the other second factors: passkeys-factors.test.ts). Runs on SQLite, and on PostgreSQL with TEST_DATABASE=postgres.
import { describe, expect, test } from "bun:test";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { relyingParty } from "../../src/auth/passkeys/relying-party.ts";
import { newId } from "../../src/lib/ids.ts";
import { blockAfter, expectProblem, testApp, type TestAppOptions } from "../helpers.ts";
import { InvalidStateError, SoftwareAuthenticator } from "../support/webauthn-authenticator.ts";
import { failure } from "../support/failure.ts";

const BASE = "/svc-api/v1/auth/passkeys";
const SIGN_IN = `${BASE}/sign-in`;
const SELF = "http://localhost";
const MFA = "/svc-api/v1/auth/mfa";
/** Challenges an answer may carry that are not base64url of svc's length. */
const NOT_CHALLENGES = ["bm90LWhhbmRl\u0000ZC1vdXQ", "bm90LWhhbmRl ZC1vdXQ", "c2hvcnQ", "x".repeat(513)];

async function passkeyApp(options: TestAppOptions = {}) {
  const t = await testApp(options);
  const rp = relyingParty(t.config.mail);
  const ann = await t.signUp("ann");
  const bob = await t.signUp("bob");
  /** A browser on svc's public origin, with its own authenticator. */
  const device = () => new SoftwareAuthenticator(rp.origin);

  const registrationOptions = async (token: string) => {
    const reply = await t.call("POST", `${BASE}/options`, { token });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  /** Registers a passkey on `authenticator` for the token's user; the reply. */
  async function register(token: string, authenticator: SoftwareAuthenticator, name?: string) {
    const response = await authenticator.register(await registrationOptions(token));
    return t.call("POST", BASE, { token, body: { response, ...(name !== undefined && { name }) } });
  }
  const signInOptions = async () => {
    const reply = await t.call("POST", `${SIGN_IN}/options`);
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const signIn = (response: unknown, mode?: "json" | "cookie", headers: Record<string, string> = {}) =>
    t.call("POST", SIGN_IN, { body: { response, ...(mode && { mode }) }, headers });
  const list = async (token: string) => {
    const reply = await t.call("GET", BASE, { token });
    expect(reply.status).toBe(200);
    return reply.body.items as { id: string; name: string; last_used_at: string | null }[];
  };
  /** A challenge handed out as the sign-in (or registration) options would, but already past its 5 minutes. */
  async function staleChallenge(purpose: "register" | "sign_in", userId: string | null) {
    const challenge = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const at = Date.now() - 10 * 60 * 1000;
    await t.store.passkeys.createChallenge({
      id: newId(),
      userId,
      purpose,
      challenge,
      createdAt: new Date(at).toISOString(),
      expiresAt: new Date(at + 5 * 60 * 1000).toISOString(),
    });
    return challenge;
  }
  /** A step-up with one of the token's user's passkeys (on `authenticator`), as a browser does it. */
  async function stepUp(token: string, authenticator: SoftwareAuthenticator) {
    const options = await t.call("POST", `${MFA}/webauthn/options`, { token });
    expect(options.status).toBe(200);
    const reply = await t.call("POST", `${MFA}/verify`, {
      token,
      body: { webauthn: await authenticator.assert(options.body) },
    });
    expect(reply.status).toBe(200);
  }
  return {
    ...t,
    rp,
    ann,
    bob,
    device,
    registrationOptions,
    register,
    signInOptions,
    signIn,
    list,
    staleChallenge,
    stepUp,
  };
}

describe("registering a passkey", () => {
  test("the options ask for a discoverable credential for svc's relying party, and the answer adds the passkey", async () => {
    const { registrationOptions, device, call, ann, rp, list, store } = await passkeyApp();
    // SVC_PUBLIC_URL unset: http://localhost:<port>.
    expect(rp).toEqual({ id: "localhost", origin: expect.stringMatching(/^http:\/\/localhost:\d+$/), name: "svc" });
    const options = await registrationOptions(ann.token);
    expect(options.rp).toEqual({ id: rp.id, name: rp.name });
    expect(options.user.name).toBe("ann");
    expect(options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "preferred" });
    expect(options.excludeCredentials).toEqual([]);
    expect(options.challenge).toBeString();

    const response = await device().register(options);
    const added = await call("POST", BASE, { token: ann.token, body: { response } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: expect.any(String),
      name: "Passkey",
      created_at: expect.any(String),
      last_used_at: null,
      device_type: "singleDevice",
      backed_up: false,
      transports: ["internal"],
    });
    expect(await list(ann.token)).toEqual([added.body]);
    const [event] = await store.audit.list({ action: "passkey.added", limit: 10 });
    expect(event).toMatchObject({ actorId: ann.user.id, targetId: ann.user.id, outcome: "success" });
  });

  test("a name is kept trimmed; longer than 64 characters, blank, or unstorable is refused", async () => {
    const { register, device, ann, call, registrationOptions, stepUp } = await passkeyApp();
    const laptop = device();
    const named = await register(ann.token, laptop, "  Laptop  ");
    expect(named.status).toBe(201);
    expect(named.body.name).toBe("Laptop");
    // A factor on now: the next ones need a step-up.
    await stepUp(ann.token, laptop);
    expect((await register(ann.token, device(), "é".repeat(64))).status).toBe(201);
    for (const name of ["x".repeat(65), "   ", "a\u0000b"]) {
      const response = await device().register(await registrationOptions(ann.token));
      expectProblem(await call("POST", BASE, { token: ann.token, body: { response, name } }), 400, "validation_failed");
    }
  });

  test("only the transports WebAuthn names are kept", async () => {
    const { device, ann, call, registrationOptions } = await passkeyApp();
    const response = await device().register(await registrationOptions(ann.token), {
      transports: ["usb", "carrier-pigeon", "usb,nfc", "hybrid"],
    });
    const added = await call("POST", BASE, { token: ann.token, body: { response } });
    expect(added.status).toBe(201);
    expect(added.body.transports).toEqual(["hybrid", "usb"]);
  });

  test("the options exclude the user's passkeys: an authenticator holding one refuses, another registers", async () => {
    const { register, device, ann, bob, registrationOptions, list, stepUp } = await passkeyApp();
    const laptop = device();
    const first = await register(ann.token, laptop);
    expect(first.status).toBe(201);
    await stepUp(ann.token, laptop);
    const options = await registrationOptions(ann.token);
    expect(options.excludeCredentials).toEqual([
      { id: laptop.credentials[0]!.id, type: "public-key", transports: ["internal"] },
    ]);
    expect(await failure(laptop.register(options))).toBeInstanceOf(InvalidStateError);
    expect((await register(ann.token, device())).status).toBe(201);
    expect(await list(ann.token)).toHaveLength(2);
    // Only the user's own: bob's options exclude none of ann's.
    expect((await registrationOptions(bob.token)).excludeCredentials).toEqual([]);
  });

  test("the same credential cannot be registered twice, by anyone", async () => {
    const { device, ann, bob, call, registrationOptions, list, stepUp } = await passkeyApp();
    const laptop = device();
    const response = await laptop.register(await registrationOptions(ann.token));
    expect((await call("POST", BASE, { token: ann.token, body: { response } })).status).toBe(201);
    await stepUp(ann.token, laptop);
    // The same credential attested again, to fresh options of ann's or of bob's: its id is taken.
    const credential = laptop.credentials[0]!.id;
    for (const who of [ann, bob]) {
      const again = await laptop.register(await registrationOptions(who.token), { reuse: credential });
      expectProblem(
        await call("POST", BASE, { token: who.token, body: { response: again } }),
        400,
        "passkey_registration_failed",
      );
    }
    // An answer whose id is not the credential its attestation names.
    const other = await laptop.register(await registrationOptions(bob.token));
    expectProblem(
      await call("POST", BASE, {
        token: bob.token,
        body: { response: { ...other, id: credential, rawId: credential } },
      }),
      400,
      "passkey_registration_failed",
    );
    expect(await list(ann.token)).toHaveLength(1);
    expect(await list(bob.token)).toHaveLength(0);
  });

  test("every failed registration is 400 passkey_registration_failed and adds nothing", async () => {
    const { device, ann, bob, call, registrationOptions, staleChallenge, list, stepUp } = await passkeyApp();
    const post = (token: string, response: unknown) => call("POST", BASE, { token, body: { response } });

    // A challenge used twice: the second answer to the same options.
    const options = await registrationOptions(ann.token);
    const laptop = device();
    const response = await laptop.register(options);
    expect((await post(ann.token, response)).status).toBe(201);
    await stepUp(ann.token, laptop);
    expectProblem(await post(ann.token, await device().register(options)), 400, "passkey_registration_failed");
    // An expired challenge.
    const stale = await staleChallenge("register", ann.user.id);
    expectProblem(
      await post(ann.token, await device().register(options, { challenge: stale })),
      400,
      "passkey_registration_failed",
    );
    // Another user's options.
    const annsOptions = await registrationOptions(ann.token);
    expectProblem(await post(bob.token, await device().register(annsOptions)), 400, "passkey_registration_failed");
    // A challenge svc never handed out.
    const made = await device().register(await registrationOptions(ann.token), { challenge: "bm90LWhhbmRlZC1vdXQ" });
    expectProblem(await post(ann.token, made), 400, "passkey_registration_failed");
    // An answer for another origin (a phishing page's).
    const phished = await device().register(await registrationOptions(ann.token), { origin: "https://evil.example" });
    expectProblem(await post(ann.token, phished), 400, "passkey_registration_failed");
    // Not an answer at all.
    await registrationOptions(ann.token);
    expectProblem(await post(ann.token, { id: "x", type: "public-key" }), 400, "passkey_registration_failed");
    // A challenge that is no base64url svc could have handed out: a NUL (which PostgreSQL cannot hold), a
    // space, too short, too long.
    for (const challenge of NOT_CHALLENGES) {
      const made = await device().register(await registrationOptions(ann.token), { challenge });
      expectProblem(await post(ann.token, made), 400, "passkey_registration_failed");
    }
    expect(await list(ann.token)).toHaveLength(1);
    expect(await list(bob.token)).toHaveLength(0);
  });

  test("every passkey route but sign-in needs a Bearer token", async () => {
    const { call } = await passkeyApp();
    for (const [method, path] of [
      ["POST", `${BASE}/options`],
      ["POST", BASE],
      ["GET", BASE],
      ["PATCH", `${BASE}/${newId()}`],
      ["DELETE", `${BASE}/${newId()}`],
    ] as const) {
      expectProblem(
        await call(method, path, { body: method === "POST" || method === "PATCH" ? {} : undefined }),
        401,
        "unauthorized",
      );
    }
  });
});

describe("managing passkeys", () => {
  test("rename your own; another's, or an id that is none, is 404 not_found", async () => {
    const { register, device, ann, bob, call, list, store } = await passkeyApp();
    const { id } = (await register(ann.token, device())).body;
    const renamed = await call("PATCH", `${BASE}/${id}`, { token: ann.token, body: { name: "Phone" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, name: "Phone" });
    expect((await list(ann.token))[0]!.name).toBe("Phone");
    expect(await store.audit.list({ action: "passkey.renamed", limit: 10 })).toHaveLength(1);

    expectProblem(await call("PATCH", `${BASE}/${id}`, { token: bob.token, body: { name: "Mine" } }), 404, "not_found");
    expectProblem(
      await call("PATCH", `${BASE}/${newId()}`, { token: ann.token, body: { name: "X" } }),
      404,
      "not_found",
    );
    expectProblem(
      await call("PATCH", `${BASE}/not-an-id`, { token: ann.token, body: { name: "X" } }),
      404,
      "not_found",
    );
    expectProblem(
      await call("PATCH", `${BASE}/${id}`, { token: ann.token, body: { name: "" } }),
      400,
      "validation_failed",
    );
    expectProblem(await call("PATCH", `${BASE}/${id}`, { token: ann.token, body: {} }), 400, "validation_failed");
    expect((await list(ann.token))[0]!.name).toBe("Phone");
  });

  test("remove your own; another's is 404 and stays; removed, it signs in no more", async () => {
    const { register, device, ann, bob, call, list, store, signInOptions, signIn } = await passkeyApp();
    const laptop = device();
    const { id } = (await register(ann.token, laptop)).body;
    expectProblem(await call("DELETE", `${BASE}/${id}`, { token: bob.token }), 404, "not_found");
    expect(await list(ann.token)).toHaveLength(1);
    // The passkey is a second factor now: the password's session must step up before it removes one.
    expectProblem(await call("DELETE", `${BASE}/${id}`, { token: ann.token }), 403, "mfa_step_up_required");
    expect(await list(ann.token)).toHaveLength(1);
    // A session the passkey itself signed in has shown a second factor.
    const { token } = (await signIn(await laptop.assert(await signInOptions()))).body;
    const removed = await call("DELETE", `${BASE}/${id}`, { token });
    expect(removed.status).toBe(204);
    expect(await list(ann.token)).toEqual([]);
    expect(await store.audit.list({ action: "passkey.removed", limit: 10 })).toHaveLength(1);
    expectProblem(await call("DELETE", `${BASE}/${id}`, { token }), 404, "not_found");
    expectProblem(await signIn(await laptop.assert(await signInOptions())), 401, "invalid_passkey");
  });
});

describe("signing in with a passkey alone", () => {
  test("json mode: a discoverable credential, no username; answered as a login, and its use recorded", async () => {
    const { register, device, ann, call, list, signInOptions, signIn, rp, store } = await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    const options = await signInOptions();
    expect(options.rpId).toBe(rp.id);
    // Alone, the passkey is the whole sign-in: its user must be verified on the device, not only present.
    expect(options.userVerification).toBe("required");
    expect(options.allowCredentials ?? []).toEqual([]);
    expectProblem(await signIn(await laptop.assert(options, { presenceOnly: true })), 401, "invalid_passkey");

    const reply = await signIn(await laptop.assert(await signInOptions()));
    expect(reply.status).toBe(200);
    // Signed in with the passkey alone: amr says so, and it counts as a second factor shown just now.
    const claims = JSON.parse(Buffer.from(reply.body.token.split(".")[1], "base64url").toString());
    expect(claims.amr).toEqual(["hwk"]);
    const [session] = (await call("GET", "/svc-api/v1/auth/sessions", { token: reply.body.token })).body;
    expect(session).toMatchObject({ amr: ["hwk"], mfa_at: expect.any(String) });
    expect(reply.body).toMatchObject({ token_type: "Bearer", user: { id: ann.user.id, username: "ann" } });
    expect(reply.body.refresh_token).toBeString();
    expect(reply.headers.getSetCookie()).toEqual([]);
    const me = await call("GET", "/svc-api/v1/users/me", { token: reply.body.token });
    expect(me.body.username).toBe("ann");
    expect((await list(ann.token))[0]!.last_used_at).toBeString();
    const [login] = await store.audit.list({ action: "login.succeeded", targetId: ann.user.id, limit: 1 });
    expect(login).toBeDefined();
    // A second sign-in, with the counter moved on.
    expect((await signIn(await laptop.assert(await signInOptions()))).status).toBe(200);
    const metrics = (await call("GET", "/svc/metrics")).text; // the presence-only refusal is the failure
    expect(metrics).toContain('svc_mfa_verifications_total{method="webauthn",outcome="success",service="svc"} 2');
    expect(metrics).toContain('svc_mfa_verifications_total{method="webauthn",outcome="failure",service="svc"} 1');
  });

  test("cookie mode: the refresh token goes to the session cookie, and only for svc's own pages", async () => {
    const { register, device, ann, signInOptions, signIn } = await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    const reply = await signIn(await laptop.assert(await signInOptions()), "cookie", { origin: SELF });
    expect(reply.status).toBe(200);
    expect(reply.body.token).toBeString();
    expect(reply.body.refresh_token).toBeUndefined();
    const [cookie] = reply.headers.getSetCookie();
    expect(Bun.Cookie.parse(cookie!)).toMatchObject({ name: "svc_refresh", httpOnly: true, sameSite: "strict" });

    const elsewhere = await signIn(await laptop.assert(await signInOptions()), "cookie", {
      origin: "https://evil.example",
    });
    expectProblem(elsewhere, 403, "csrf_refused");
    expect(elsewhere.headers.getSetCookie()).toEqual([]);
  });

  test("every refused answer is 401 invalid_passkey and starts no session", async () => {
    const { register, device, ann, bob, signInOptions, signIn, staleChallenge, store, registrationOptions, stepUp } =
      await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    await stepUp(ann.token, laptop);
    const bobsKey = device();
    await register(bob.token, bobsKey);
    const refused = async (response: unknown) => expectProblem(await signIn(response), 401, "invalid_passkey");

    // An unknown credential: made for svc's relying party, never registered.
    const stranger = device();
    await stranger.register(await registrationOptions(ann.token));
    await refused(await stranger.assert(await signInOptions()));
    // A challenge used twice: the same answer again, after it signed in once.
    const answer = await laptop.assert(await signInOptions());
    expect((await signIn(answer)).status).toBe(200);
    await refused(answer);
    // A stale challenge (past its 5 minutes), and one svc never handed out.
    await refused(await laptop.assert(await signInOptions(), { challenge: await staleChallenge("sign_in", null) }));
    await refused(await laptop.assert(await signInOptions(), { challenge: "bm90LWhhbmRlZC1vdXQ" }));
    // A registration's challenge is not a sign-in's.
    const registering = await registrationOptions(ann.token);
    await refused(await laptop.assert(await signInOptions(), { challenge: registering.challenge }));
    // A bad signature.
    await refused(await laptop.assert(await signInOptions(), { badSignature: true }));
    // A counter that went backwards, or did not move (a cloned or replayed authenticator).
    // (The stored counter: the authenticator counted the refused answers above too, as a real one would.)
    expect((await signIn(await laptop.assert(await signInOptions()))).status).toBe(200);
    const stored = (await store.passkeys.list(ann.user.id))[0]!.counter;
    expect(stored).toBeGreaterThan(1);
    await refused(await laptop.assert(await signInOptions(), { counter: stored - 1 }));
    await refused(await laptop.assert(await signInOptions(), { counter: stored }));
    // Another origin's answer (a phishing page relaying svc's options).
    await refused(await laptop.assert(await signInOptions(), { origin: "https://evil.example" }));
    // A passkey that claims another user (its user handle names bob).
    const bobsHandle = bobsKey.credentials[0]!.userHandle;
    await refused(await laptop.assert(await signInOptions(), { userHandle: bobsHandle }));
    // Not an answer at all.
    await signInOptions();
    await refused({ id: "x", type: "public-key" });
    // A challenge that is no base64url svc could have handed out.
    for (const challenge of NOT_CHALLENGES) await refused(await laptop.assert(await signInOptions(), { challenge }));
    // After all that, the real one still signs in: refusals changed nothing.
    expect((await signIn(await laptop.assert(await signInOptions()))).status).toBe(200);
    const failed = await store.audit.list({ action: "login.failed", limit: 100 });
    expect(failed.length).toBeGreaterThanOrEqual(9);
    expect(failed.every((event) => JSON.parse(event.detail!).method === "passkey")).toBe(true);
  });

  test("a counter past 2^31 (WebAuthn's go to 2^32-1) signs in, and is kept", async () => {
    const { register, device, ann, signInOptions, signIn, store } = await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    for (const counter of [2 ** 31 + 5, 2 ** 32 - 1]) {
      expect((await signIn(await laptop.assert(await signInOptions(), { counter }))).status).toBe(200);
      expect((await store.passkeys.list(ann.user.id))[0]!.counter).toBe(counter);
    }
    // Still only forward.
    expectProblem(
      await signIn(await laptop.assert(await signInOptions(), { counter: 2 ** 31 + 6 })),
      401,
      "invalid_passkey",
    );
  });

  test("one answer sent twice at once signs in once: its challenge is taken once", async () => {
    const { register, device, ann, signInOptions, signIn, registrationOptions, call, stepUp } = await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    await stepUp(ann.token, laptop);
    const answer = await laptop.assert(await signInOptions());
    const replies = await Promise.all([signIn(answer), signIn(answer)]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401]);
    // And a registration's answer, likewise.
    const response = await device().register(await registrationOptions(ann.token));
    const post = () => call("POST", BASE, { token: ann.token, body: { response } });
    const added = await Promise.all([post(), post()]);
    expect(added.map((reply) => reply.status).sort()).toEqual([201, 400]);
  });

  test("a disabled account: 403 account_disabled, once the passkey is right", async () => {
    const { register, device, ann, signInOptions, signIn, store } = await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    const event = auditEvent("admin.user.updated", { target: ann.user.id, origin: CLI_ORIGIN });
    await store.users.administer(ann.user.id, { status: "disabled" }, new Date().toISOString(), event);
    expectProblem(await signIn(await laptop.assert(await signInOptions())), 403, "account_disabled");
    // A wrong answer learns nothing of the account.
    expectProblem(
      await signIn(await laptop.assert(await signInOptions(), { badSignature: true })),
      401,
      "invalid_passkey",
    );
  });

  test("an unverified address while SVC_EMAIL_VERIFICATION=required: 403 email_unverified, as login", async () => {
    const { register, device, ann, store, config } = await passkeyApp();
    const laptop = device();
    await register(ann.token, laptop);
    // Another instance on the same database, requiring verified addresses.
    const strict = await testApp({ on: store, config: { mail: { ...config.mail, verification: "required" } } });
    const options = (await strict.call("POST", `${SIGN_IN}/options`)).body;
    const reply = await strict.call("POST", SIGN_IN, { body: { response: await laptop.assert(options) } });
    expectProblem(reply, 403, "email_unverified");
  });

  test("failures are throttled per client as failed logins are: 429 too_many_requests with Retry-After", async () => {
    const { register, device, ann, signInOptions, signIn } = await passkeyApp({
      config: { loginThrottle: { ...blockAfter(100), clientMaxFailures: 3 } },
    });
    const laptop = device();
    await register(ann.token, laptop);
    for (let i = 0; i < 3; i++) {
      expectProblem(
        await signIn(await laptop.assert(await signInOptions(), { badSignature: true })),
        401,
        "invalid_passkey",
      );
    }
    const blocked = await signIn(await laptop.assert(await signInOptions()));
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("sign-in options: 30 a minute per client, the 31st is 429 too_many_requests with Retry-After", async () => {
    // Each call writes a challenge, and needs no token: a client is held to a rate, as sign-ups are.
    const { call } = await passkeyApp({ config: { trustProxy: 1 } });
    const from = (address: string) => ({ headers: { "x-forwarded-for": address } });
    for (let i = 0; i < 30; i++)
      expect((await call("POST", `${SIGN_IN}/options`, from("203.0.113.7"))).status).toBe(200);
    const refused = await call("POST", `${SIGN_IN}/options`, from("203.0.113.7"));
    expectProblem(refused, 429, "too_many_requests");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another client goes on (an IPv6 one, another IPv4 address).
    for (const address of ["2001:db8::1", "198.51.100.5"])
      expect((await call("POST", `${SIGN_IN}/options`, from(address))).status).toBe(200);
  });

  test("the body is checked: a missing answer or an unknown mode is 400 validation_failed", async () => {
    const { call } = await passkeyApp();
    expectProblem(await call("POST", SIGN_IN, { body: {} }), 400, "validation_failed");
    expectProblem(
      await call("POST", SIGN_IN, { body: { response: { id: "x", type: "public-key" }, mode: "sideways" } }),
      400,
      "validation_failed",
    );
  });
});
