// Which account a sign-in through an OpenID provider is, through app.handle against real providers: a first
// sign-in makes one, a known identity finds its own, an address verified on both sides links, a signed-in
// user links explicitly; the identities listed and unlinked (never the last way in); a first password set
// by an account that had none; and two first sign-ins of one identity at once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOidcProviders } from "../../src/auth/oidc/providers.ts";
import { createLoggers } from "../../src/observability/log.ts";
import { expectProblem } from "../helpers.ts";
import { expectFailurePage, type OidcApp, oidcApp } from "../support/oidc-app.ts";
import { PUBLIC_URL, type TestIdp, testIdp } from "../support/oidc.ts";
import { SoftwareAuthenticator } from "../support/webauthn-authenticator.ts";

const IDENTITIES = "/svc-api/v1/auth/identities";
const PASSWORD = "/svc-api/v1/users/password";
const PASSKEYS = "/svc-api/v1/auth/passkeys";
const MFA = "/svc-api/v1/auth/mfa";

let idp: TestIdp;
let other: TestIdp;
beforeAll(async () => {
  [idp, other] = await Promise.all([testIdp(), testIdp("other")]);
});
afterAll(() => Promise.all([idp.stop(), other.stop()]));

let subjects = 0;
function nextAccount(at: TestIdp, extra: Partial<NonNullable<TestIdp["idp"]["account"]>> = {}) {
  const n = ++subjects;
  at.idp.account = { sub: `acct-${n}`, email: `acct${n}@example.test`, email_verified: true, ...extra };
  return at.idp.account;
}

/**
 * Follows a link answer's url as the browser would, with its session cookie (`cookie`): the provider's
 * pages, then svc's callback.
 */
async function follow(app: OidcApp, url: string, cookie: string) {
  const start = new URL(url);
  expect(start.origin).toBe(PUBLIC_URL);
  return app.signIn(start.search, "test", cookie);
}

describe("first and later sign-ins", () => {
  test("a first sign-in makes an account from the ID token; the next finds it", async () => {
    const app = await oidcApp(idp);
    const account = nextAccount(idp, { email: "Mixed.Case@Example.test", preferred_username: "mixed" });
    expect((await app.signIn()).status).toBe(303);
    const user = (await app.store.users.findByLogin("mixed"))!;
    expect(user).toMatchObject({ email: "mixed.case@example.test", passwordHash: "" });
    expect(user.emailVerifiedAt).not.toBeNull();
    const [linked] = await app.store.identities.list(user.id);
    expect(linked).toMatchObject({ provider: "test", issuer: idp.idp.issuer, subject: account.sub });
    app.clock.pass(1000);
    const again = await app.signIn();
    expect(again.status).toBe(303);
    expect(await app.store.identities.list(user.id)).toEqual([
      { ...linked!, lastUsedAt: new Date(app.clock.now()).toISOString() },
    ]);
    const how = (await app.audits("oidc.signed_in")).map((event) => JSON.parse(event.detail!).how);
    expect(how).toEqual(["known", "created"]);
  });

  test("an address the provider does not say it verified makes no account: the oidc_email_unverified page", async () => {
    const app = await oidcApp(idp);
    nextAccount(idp, { preferred_username: "unvouched", email_verified: false });
    expectFailurePage(await app.signIn(), 400, "oidc_email_unverified");
    expect(await app.store.users.findByLogin("unvouched")).toBeNull();
  });

  test("two providers' users both called ann: ann and ann2", async () => {
    const providers = createOidcProviders([idp.settings, other.settings], {
      logger: createLoggers("silent").logger,
    });
    await providers.start();
    const app = await oidcApp(
      idp,
      { oidc: { providers: [idp.settings, other.settings], returnUrls: [] } },
      { providers },
    );
    nextAccount(idp, { preferred_username: "ann", email: "ann@one.example.test" });
    nextAccount(other, { preferred_username: "ann", email: "ann@two.example.test" });
    expect((await app.signIn()).status).toBe(303);
    expect((await app.signIn("", "other")).status).toBe(303);
    expect((await app.store.users.findByLogin("ann"))!.email).toBe("ann@one.example.test");
    expect((await app.store.users.findByLogin("ann2"))!.email).toBe("ann@two.example.test");
    providers.stop();
  });

  test("an address verified on both sides links the provider to the account that has it", async () => {
    const app = await oidcApp(idp);
    const ann = await app.signUp("ann");
    await app.verify(ann.user.id);
    const account = nextAccount(idp, { email: ann.user.email, preferred_username: "someone-else" });
    expect((await app.signIn()).status).toBe(303);
    expect((await app.store.identities.find(idp.idp.issuer, account.sub))!.userId).toBe(ann.user.id);
    expect(await app.store.users.findByLogin("someone-else")).toBeNull();
  });

  test("two first sign-ins of one identity at once: one account, one identity, both signed in", async () => {
    const app = await oidcApp(idp);
    const account = nextAccount(idp, { preferred_username: "twice" });
    const flows = await Promise.all([app.begin(), app.begin()]);
    const replies = await Promise.all(flows.map(({ flow, callback }) => app.finish(callback, flow)));
    expect(replies.map((reply) => reply.status)).toEqual([303, 303]);
    expect(replies.every((reply) => app.sessionCookie(reply) !== null)).toBe(true);
    const identity = (await app.store.identities.find(idp.idp.issuer, account.sub))!;
    expect(await app.store.identities.list(identity.userId)).toHaveLength(1);
    expect(await app.store.users.findByLogin("twice2")).toBeNull();
    expect(await app.audits("user.created")).toHaveLength(1);
  });
});

describe("linking explicitly, listing and unlinking", () => {
  test("POST auth/identities/{provider} gives a url; following it links; GET lists it", async () => {
    const app = await oidcApp(idp);
    const ann = await app.cookieSession("ann");
    const account = nextAccount(idp, { email: "ann-elsewhere@example.test", email_verified: false });
    const started = await app.call("POST", `${IDENTITIES}/test`, { token: ann.token });
    expect(started.status).toBe(200);
    const linked = await follow(app, started.body.url, ann.cookie);
    expect(linked.status).toBe(303);
    expect(linked.headers.get("location")).toBe(`${PUBLIC_URL}/svc/admin?linked=test`);
    const listed = await app.call("GET", IDENTITIES, { token: ann.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      {
        id: expect.any(String),
        provider: "test",
        email: account.email,
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ]);
    expect(await app.audits("identity.linked")).toHaveLength(1);
  });

  test("linking an identity another account has: the identity_taken page, nothing changed", async () => {
    const app = await oidcApp(idp);
    nextAccount(idp, { preferred_username: "holder" });
    expect((await app.signIn()).status).toBe(303);
    const bob = await app.cookieSession("bob");
    const started = await app.call("POST", `${IDENTITIES}/test`, { token: bob.token });
    expectFailurePage(await follow(app, started.body.url, bob.cookie), 409, "identity_taken");
    expect((await app.call("GET", IDENTITIES, { token: bob.token })).body.items).toEqual([]);
  });

  test("with a second factor on, linking needs a step-up", async () => {
    const app = await oidcApp(idp);
    const ann = await app.signUp("ann");
    await app.enrolTotp(ann.token);
    app.clock.pass(301_000);
    expectProblem(await app.call("POST", `${IDENTITIES}/test`, { token: ann.token }), 403, "mfa_step_up_required");
  });

  test("a link opened in a browser not signed in as its account is refused (403 csrf_refused): nothing linked", async () => {
    const app = await oidcApp(idp);
    const mallory = await app.cookieSession("mallory");
    const victim = await app.cookieSession("victim");
    nextAccount(idp, { preferred_username: "victims-idp" });
    // Mallory's link, opened by the victim (a link in a mail, a page that navigates): the victim's provider
    // account would otherwise become a way into Mallory's account.
    const started = await app.call("POST", `${IDENTITIES}/test`, { token: mallory.token });
    const url = new URL(started.body.url);
    for (const cookie of [victim.cookie, undefined]) {
      const opened = await app.call("GET", `${url.pathname}${url.search}`, cookie ? { headers: { cookie } } : {});
      expectProblem(opened, 403, "csrf_refused");
    }
    expect(await app.store.identities.list(mallory.user.id)).toEqual([]);
  });

  test("a link for an unknown provider: 404; its ticket altered: 400 invalid_oidc_code", async () => {
    const app = await oidcApp(idp);
    const ann = await app.signUp("ann");
    expectProblem(await app.call("POST", `${IDENTITIES}/nobody`, { token: ann.token }), 404, "not_found");
    const started = await app.call("POST", `${IDENTITIES}/test`, { token: ann.token });
    const url = new URL(started.body.url);
    url.searchParams.set("link", `${url.searchParams.get("link")}x`);
    expectProblem(await app.call("GET", `${url.pathname}${url.search}`), 400, "invalid_oidc_code");
  });

  test("DELETE refuses the last way in (409 last_sign_in_method) until a first password is set", async () => {
    const app = await oidcApp(idp);
    nextAccount(idp, { preferred_username: "onlyidp" });
    const signedIn = await app.signIn();
    const token = await app.tokenOf(signedIn);
    expectProblem(await app.call("DELETE", `${IDENTITIES}/test`, { token }), 409, "last_sign_in_method");
    const set = await app.call("PUT", PASSWORD, { token, body: { new_password: "a first password, long" } });
    expect(set.status).toBe(200);
    const fresh = set.body.token as string;
    expect((await app.call("DELETE", `${IDENTITIES}/test`, { token: fresh })).status).toBe(204);
    expect((await app.call("GET", IDENTITIES, { token: fresh })).body.items).toEqual([]);
    expectProblem(await app.call("DELETE", `${IDENTITIES}/test`, { token: fresh }), 404, "not_found");
    const login = await app.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "onlyidp", password: "a first password, long" },
    });
    expect(login.status).toBe(200);
  });
});

describe("the last way in, whichever goes last", () => {
  test("a passkey is not removed while it is the account's last way to sign in (409 last_sign_in_method)", async () => {
    const app = await oidcApp(idp);
    nextAccount(idp, { preferred_username: "keyonly" });
    const token = await app.tokenOf(await app.signIn());
    const device = new SoftwareAuthenticator(PUBLIC_URL);
    const options = await app.call("POST", `${PASSKEYS}/options`, { token });
    const added = await app.call("POST", PASSKEYS, { token, body: { response: await device.register(options.body) } });
    expect(added.status).toBe(201);
    // The passkey is a second factor now: unlinking and removing need a step-up, shown with it.
    const stepUp = await app.call("POST", `${MFA}/webauthn/options`, { token });
    const shown = await app.call("POST", `${MFA}/verify`, {
      token,
      body: { webauthn: await device.assert(stepUp.body) },
    });
    expect(shown.status).toBe(200);
    expect((await app.call("DELETE", `${IDENTITIES}/test`, { token })).status).toBe(204);
    const removal = await app.call("DELETE", `${PASSKEYS}/${added.body.id}`, { token });
    expectProblem(removal, 409, "last_sign_in_method");
    expect((await app.call("GET", PASSKEYS, { token })).body.items.map((key: { id: string }) => key.id)).toEqual([
      added.body.id,
    ]);
  });
});

describe("a first password for an account made through a provider", () => {
  test("more than 5 minutes after signing in: 403 recent_sign_in_required, nothing changed", async () => {
    const app = await oidcApp(idp);
    nextAccount(idp, { preferred_username: "latecomer" });
    const token = await app.tokenOf(await app.signIn());
    app.clock.pass(301_000);
    const late = await app.call("PUT", PASSWORD, { token, body: { new_password: "a first password, long" } });
    expectProblem(late, 403, "recent_sign_in_required");
    expect((await app.store.users.findByLogin("latecomer"))!.passwordHash).toBe("");
  });

  test("with a second factor on, a step-up in the session makes it fresh again", async () => {
    const app = await oidcApp(idp);
    nextAccount(idp, { preferred_username: "stepper" });
    const token = await app.tokenOf(await app.signIn());
    const totp = await app.enrolTotp(token);
    app.clock.pass(301_000);
    const body = { new_password: "a first password, long" };
    expectProblem(await app.call("PUT", PASSWORD, { token, body }), 403, "mfa_step_up_required");
    const stepUp = await app.call("POST", "/svc-api/v1/auth/mfa/verify", {
      token,
      body: { code: totp.generate({ timestamp: app.clock.now() }) },
    });
    expect(stepUp.status).toBe(200);
    expect((await app.call("PUT", PASSWORD, { token, body })).status).toBe(200);
    expect((await app.store.users.findByLogin("stepper"))!.passwordHash).not.toBe("");
  });

  test("an account with a password still needs current_password", async () => {
    const app = await oidcApp(idp);
    const ann = await app.signUp("ann");
    const missing = await app.call("PUT", PASSWORD, { token: ann.token, body: { new_password: "another one, long" } });
    expectProblem(missing, 400, "validation_failed");
  });
});
