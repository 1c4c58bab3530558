// The refusals of a sign-in through an OpenID provider, through app.handle against a real provider: each
// ends on svc's own page (the catalogue's status, the code in it, no stack trace) or, for a flow that
// started from an app's listed return_to, a 303 there with ?error=; each is audited (oidc.failed) and
// logged, and nothing is written on the way (no user, no identity, no session).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { createOidcProviders } from "../../src/auth/oidc/providers.ts";
import { createLoggers } from "../../src/observability/log.ts";
import { expectProblem, promote, testApp } from "../helpers.ts";
import { freePort } from "../ports.ts";
import { APP_RETURN, expectFailurePage, OIDC, type OidcApp, oidcApp } from "../support/oidc-app.ts";
import { type TestIdp, testIdp } from "../support/oidc.ts";
import { type TestOidcProvider, unpublishedKey } from "../support/oidc-provider.ts";

let idp: TestIdp;
beforeAll(async () => {
  idp = await testIdp();
});
afterAll(() => idp.stop());

let subjects = 0;
/** A fresh account at the provider, its address verified there unless told. */
function nextAccount(extra: Partial<NonNullable<TestOidcProvider["account"]>> = {}) {
  const n = ++subjects;
  idp.idp.account = { sub: `refused-${n}`, email: `refused${n}@example.test`, email_verified: true, ...extra };
  idp.idp.account.preferred_username ??= `refused${n}`;
  return idp.idp.account;
}

/** The one oidc.failed event, its reason, and the log line that goes with it. */
async function expectAuditedFailure(app: OidcApp, reason: string) {
  const failed = await app.audits("oidc.failed");
  expect(failed.map((event) => [event.outcome, JSON.parse(event.detail!)])).toEqual([
    ["failure", { provider: "test", reason }],
  ]);
  const lines = (await app.logs()).filter((line) => line.includes("OpenID sign-in failed"));
  expect(lines.map((line) => JSON.parse(line).reason)).toEqual([reason]);
}

/** Nothing of the account was written: no user by that name or address, no identity, no sign-in. */
async function expectNothingWritten(
  app: OidcApp,
  account: { sub: string; email?: string; preferred_username?: string },
) {
  expect(await app.store.users.findByLogin(account.preferred_username!)).toBeNull();
  expect(await app.store.identities.find(idp.idp.issuer, account.sub)).toBeNull();
  if (account.email) expect(await app.store.users.findByLogin(account.email)).toBeNull();
}

describe("the provider's answer, checked", () => {
  test("a replayed callback is refused (its code is spent) and signs in no second time", async () => {
    nextAccount();
    const app = await oidcApp(idp);
    const { flow, callback } = await app.begin();
    expect((await app.finish(callback, flow)).status).toBe(303);
    const replayed = await app.finish(callback, flow);
    expectFailurePage(replayed, 400, "oidc_invalid_response");
    expect(replayed.headers.getSetCookie().some((c) => c.startsWith("svc_refresh="))).toBe(false);
    expect(await app.audits("oidc.signed_in")).toHaveLength(1);
    await expectAuditedFailure(app, "oidc_invalid_response");
  });

  test("a callback whose state is not the flow's is refused", async () => {
    const account = nextAccount();
    const app = await oidcApp(idp);
    const { flow, answer } = await app.begin();
    answer.searchParams.set("state", "not-the-flows-state");
    expectFailurePage(await app.finish(`${answer.pathname}${answer.search}`, flow), 400, "oidc_state_mismatch");
    await expectAuditedFailure(app, "oidc_state_mismatch");
    await expectNothingWritten(app, account);
  });

  const edits: Array<[string, () => Promise<NonNullable<TestOidcProvider["idTokenEdit"]>>]> = [
    ["a nonce not the flow's", async () => ({ claims: { nonce: "another-flows-nonce" } })],
    ["another issuer", async () => ({ claims: { iss: "https://elsewhere.example.test" } })],
    ["another audience", async () => ({ claims: { aud: "another-client" } })],
    [
      "an expiry past",
      async () => {
        const past = Math.floor(Date.now() / 1000) - 3600;
        return { claims: { iat: past - 600, exp: past } };
      },
    ],
    ["a key the provider never published", async () => ({ key: await unpublishedKey() })],
    [
      "a key the provider rotated away",
      async () => {
        const [old] = idp.idp.signingKeys();
        await idp.idp.rotateKeys();
        return { key: old! };
      },
    ],
  ];
  for (const [what, edit] of edits) {
    test(`an ID token with ${what} is refused`, async () => {
      const account = nextAccount();
      const app = await oidcApp(idp);
      const chosen = await edit();
      const { flow, callback } = await app.begin();
      idp.idp.idTokenEdit = chosen;
      try {
        expectFailurePage(await app.finish(callback, flow), 400, "oidc_invalid_response");
      } finally {
        idp.idp.idTokenEdit = null;
      }
      await expectAuditedFailure(app, "oidc_invalid_response");
      await expectNothingWritten(app, account);
    });
  }

  test("the user cancelled at the provider (access_denied): oidc_provider_error", async () => {
    const app = await oidcApp(idp);
    idp.idp.account = null;
    try {
      const { flow, answer } = await app.begin();
      expect(answer.searchParams.get("error")).toBe("access_denied");
      expectFailurePage(await app.finish(`${answer.pathname}${answer.search}`, flow), 400, "oidc_provider_error");
    } finally {
      nextAccount();
    }
    await expectAuditedFailure(app, "oidc_provider_error");
  });

  test("no flow cookie (another browser, or it expired): oidc_flow_expired", async () => {
    const account = nextAccount();
    const app = await oidcApp(idp);
    const { callback } = await app.begin();
    expectFailurePage(await app.finish(callback), 400, "oidc_flow_expired");
    await expectAuditedFailure(app, "oidc_flow_expired");
    await expectNothingWritten(app, account);
  });

  test("a flow older than 10 minutes by the app's clock: oidc_flow_expired", async () => {
    nextAccount();
    const app = await oidcApp(idp);
    const { flow, callback } = await app.begin();
    app.clock.pass(600_001);
    expectFailurePage(await app.finish(callback, flow), 400, "oidc_flow_expired");
  });

  test("a failure of a flow from an app's listed return_to is a 303 there with ?error=, not a page", async () => {
    const account = nextAccount();
    const app = await oidcApp(idp);
    const { flow, answer } = await app.begin(`?return_to=${encodeURIComponent(APP_RETURN)}`);
    answer.searchParams.set("state", "forged");
    const reply = await app.finish(`${answer.pathname}${answer.search}`, flow);
    expect(reply.status).toBe(303);
    expect(reply.headers.get("location")).toBe(`${APP_RETURN}?error=oidc_state_mismatch`);
    await expectAuditedFailure(app, "oidc_state_mismatch");
    await expectNothingWritten(app, account);
  });
});

describe("the start, refused before the provider is involved", () => {
  test("return_to on a foreign origin: 400 invalid_return_to, and no flow cookie", async () => {
    const app = await oidcApp(idp);
    for (const to of ["https://evil.example.test/", "//evil.example.test/", "https://app.example.com/elsewhere"]) {
      const reply = await app.call("GET", `${OIDC}/test?return_to=${encodeURIComponent(to)}`);
      expectProblem(reply, 400, "invalid_return_to");
      expect(reply.headers.getSetCookie()).toEqual([]);
    }
  });

  test("mode=code without a listed return_to: 400 invalid_return_to", async () => {
    const app = await oidcApp(idp);
    expectProblem(await app.call("GET", `${OIDC}/test?mode=code`), 400, "invalid_return_to");
    expectProblem(
      await app.call("GET", `${OIDC}/test?mode=code&return_to=%2Fsvc%2Fconsole%2F`),
      400,
      "invalid_return_to",
    );
  });

  test("an unknown provider: 404 not_found", async () => {
    const app = await oidcApp(idp);
    expectProblem(await app.call("GET", `${OIDC}/nobody`), 404, "not_found");
  });

  test("a provider not reached: 503 oidc_provider_unavailable with Retry-After", async () => {
    const down = { ...idp.settings, name: "down", issuer: `http://127.0.0.1:${freePort()}` };
    // Never started: as a provider whose discovery has not succeeded yet.
    const providers = createOidcProviders([down], { logger: createLoggers("silent").logger });
    const app = await oidcApp(idp, {}, { providers });
    const reply = await app.call("GET", `${OIDC}/down`);
    expectProblem(reply, 503, "oidc_provider_unavailable");
    expect(reply.headers.get("retry-after")).toBe("30");
    expect(reply.headers.getSetCookie()).toEqual([]);
  });
});

describe("the account rules", () => {
  test("linking by address needs it verified on both sides: else email_taken, and no identity written", async () => {
    const app = await oidcApp(idp);
    const ann = await app.signUp("ann");
    // svc has not seen ann's address verified; the provider vouches for it.
    const vouched = nextAccount({ email: ann.user.email, preferred_username: "ann-at-idp" });
    expectFailurePage(await app.signIn(), 409, "email_taken");
    expect(await app.store.identities.find(idp.idp.issuer, vouched.sub)).toBeNull();
    // svc has, and the provider does not vouch for it.
    await app.verify(ann.user.id);
    const unvouched = nextAccount({ email: ann.user.email, email_verified: false, preferred_username: "ann-idp2" });
    expectFailurePage(await app.signIn(), 409, "email_taken");
    expect(await app.store.identities.find(idp.idp.issuer, unvouched.sub)).toBeNull();
    expect(await app.store.identities.list(ann.user.id)).toEqual([]);
    expect(await app.store.users.findByLogin("ann-at-idp")).toBeNull();
    const reasons = (await app.audits("oidc.failed")).map((event) => JSON.parse(event.detail!).reason);
    expect(reasons).toEqual(["email_taken", "email_taken"]);
  });

  test("a disabled account whose verified address the provider vouches for: refused, and not linked", async () => {
    const app = await oidcApp(idp);
    const ann = await app.signUp("ann");
    await app.verify(ann.user.id);
    const at = new Date().toISOString();
    const off = auditEvent("admin.user.updated", { target: ann.user.id, origin: CLI_ORIGIN }, at);
    await app.store.users.administer(ann.user.id, { status: "disabled" }, at, off);
    const account = nextAccount({ email: ann.user.email, preferred_username: "ann-disabled" });
    expectFailurePage(await app.signIn(), 403, "account_disabled");
    expect(await app.store.identities.find(idp.idp.issuer, account.sub)).toBeNull();
    expect(await app.audits("identity.linked")).toEqual([]);
  });

  test("sign-up closed: the signup_closed page, and no account", async () => {
    const account = nextAccount();
    const app = await oidcApp(idp, { signup: { mode: "closed" } });
    expectFailurePage(await app.signIn(), 403, "signup_closed");
    await expectAuditedFailure(app, "signup_closed");
    await expectNothingWritten(app, account);
  });

  test("sign-up by invitation: without one the invitation_required page; with one, an account, and it is spent", async () => {
    const open = await testApp();
    const root = await open.signUp("root");
    await promote(open.store, root.user.id);
    const app = await oidcApp(idp, { signup: { mode: "invite" } }, { on: open.store });
    const account = nextAccount();
    expectFailurePage(await app.signIn(), 403, "invitation_required");
    await expectNothingWritten(app, account);
    const issued = await app.call("POST", "/svc-api/v1/admin/invitations", { token: root.token, body: {} });
    expect(issued.status).toBe(201);
    const invited = await app.signIn(`?invitation=${encodeURIComponent(issued.body.code)}`);
    expect(invited.status).toBe(303);
    expect(await app.store.users.findByLogin(account.preferred_username!)).not.toBeNull();
    expect(await app.audits("invitation.redeemed")).toHaveLength(1);
    const again = nextAccount();
    expectFailurePage(
      await app.signIn(`?invitation=${encodeURIComponent(issued.body.code)}`),
      403,
      "invalid_invitation",
    );
    await expectNothingWritten(app, again);
  });

  test("a disabled account: the account_disabled page, and no session", async () => {
    nextAccount();
    const app = await oidcApp(idp);
    expect((await app.signIn()).status).toBe(303);
    const user = (await app.store.users.findByLogin(idp.idp.account!.preferred_username!))!;
    const at = new Date().toISOString();
    await app.store.users.administer(
      user.id,
      { status: "disabled" },
      at,
      auditEvent("admin.user.updated", { target: user.id, origin: CLI_ORIGIN }, at),
    );
    const refused = await app.signIn();
    expectFailurePage(refused, 403, "account_disabled");
    expect(refused.headers.getSetCookie().some((c) => c.startsWith("svc_refresh="))).toBe(false);
    await expectAuditedFailure(app, "account_disabled");
  });

  test("SVC_EMAIL_VERIFICATION=required and an account whose address svc has not verified: the email_unverified page", async () => {
    const account = nextAccount();
    const app = await oidcApp(idp, { mail: { verification: "required" } as never });
    // An account signed up with a password, its address not yet verified, with the identity linked to it.
    const created = await app.call("POST", "/svc-api/v1/users/create", {
      body: { username: "unverified", email: "unverified@example.test", password: "correct horse battery" },
    });
    expect(created.status).toBe(201);
    const at = new Date(app.clock.now()).toISOString();
    const linkedAt = auditEvent("identity.linked", { target: created.body.id, origin: CLI_ORIGIN }, at);
    const identity = { id: crypto.randomUUID(), userId: created.body.id, provider: "test", issuer: idp.idp.issuer };
    await app.store.identities.link(
      { ...identity, subject: account.sub, email: null, createdAt: at, lastUsedAt: null },
      linkedAt,
    );
    const refused = await app.signIn();
    expectFailurePage(refused, 403, "email_unverified");
    expect(refused.headers.getSetCookie().some((c) => c.startsWith("svc_refresh="))).toBe(false);
    await expectAuditedFailure(app, "email_unverified");
  });
});
