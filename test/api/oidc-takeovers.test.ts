// Ways into someone else's account through a provider's sign-in, each refused: a return_to the URL parser
// reads as another host, an e-mail claim that is no address (read as a username), an account made from an
// address the provider never verified (which its owner could verify later), a disabled account linked, and a
// second identity at a provider the account has one at.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOidcProviders } from "../../src/auth/oidc/providers.ts";
import { createLoggers } from "../../src/observability/log.ts";
import { expectProblem } from "../helpers.ts";
import { expectFailurePage, oidcApp } from "../support/oidc-app.ts";
import { type TestIdp, testIdp } from "../support/oidc.ts";

let idp: TestIdp;
let other: TestIdp;
beforeAll(async () => {
  [idp, other] = await Promise.all([testIdp(), testIdp("other")]);
});
afterAll(() => Promise.all([idp.stop(), other.stop()]));

describe("refused", () => {
  test.each(["/\t/evil.example/x", "/\n/evil.example/x", "/\r\\evil.example/x", "/ /evil.example/x"])(
    "a return_to the URL parser reads as another host: %j",
    async (returnTo) => {
      const app = await oidcApp(idp);
      const start = await app.call("GET", `/svc-api/v1/auth/oidc/test?return_to=${encodeURIComponent(returnTo)}`);
      expectProblem(start, 400, "invalid_return_to");
    },
  );

  test("an e-mail claim that is no address: no account found by it (not even by username), none made", async () => {
    const app = await oidcApp(idp);
    const victim = await app.signUp("victim");
    await app.verify(victim.user.id);
    idp.idp.account = { sub: "attacker-1", email: "victim", email_verified: true };
    expectFailurePage(await app.signIn(), 400, "oidc_email_missing");
    expect(await app.store.identities.find(idp.idp.issuer, "attacker-1")).toBeNull();
  });

  test("an address the provider has not verified makes no account (its owner could verify it later)", async () => {
    const providers = createOidcProviders([idp.settings, other.settings], { logger: createLoggers("silent").logger });
    await providers.start();
    try {
      const app = await oidcApp(
        idp,
        { oidc: { providers: [idp.settings, other.settings], returnUrls: [] } },
        { providers },
      );
      idp.idp.account = {
        sub: "attacker-2",
        email: "owner@example.test",
        email_verified: false,
        preferred_username: "owner",
      };
      expectFailurePage(await app.signIn(), 400, "oidc_email_unverified");
      expect(await app.store.users.findByLogin("owner@example.test")).toBeNull();
      expect(await app.store.identities.find(idp.idp.issuer, "attacker-2")).toBeNull();
      // The owner, verified by their own provider, makes the account; the other identity is no way into it.
      other.idp.account = { sub: "owner-real", email: "owner@example.test", email_verified: true };
      expect((await app.signIn("", "other")).status).toBe(303);
      const owner = (await app.store.users.findByLogin("owner@example.test"))!;
      expect((await app.store.identities.list(owner.id)).map((identity) => identity.subject)).toEqual(["owner-real"]);
    } finally {
      providers.stop();
    }
  });

  test("a link to an account disabled since its ticket: the account_disabled page, nothing linked", async () => {
    const app = await oidcApp(idp);
    const ann = await app.cookieSession("ann");
    idp.idp.account = { sub: "ann-elsewhere", email: "ann-else@example.test", email_verified: true };
    const started = await app.call("POST", "/svc-api/v1/auth/identities/test", { token: ann.token });
    const url = new URL(started.body.url);
    const { flow, callback } = await app.begin(url.search, "test", ann.cookie);
    const at = new Date(app.clock.now()).toISOString();
    await app.store.users.administer(ann.user.id, { status: "disabled" }, at, undefined as never);
    expectFailurePage(await app.finish(callback, flow), 403, "account_disabled");
    expect(await app.store.identities.list(ann.user.id)).toEqual([]);
  });

  test("a second identity at a provider the account has one at: 409 identity_taken before the provider", async () => {
    const app = await oidcApp(idp);
    idp.idp.account = {
      sub: "twice-1",
      email: "twice@example.test",
      email_verified: true,
      preferred_username: "twice",
    };
    const token = await app.tokenOf(await app.signIn());
    const again = await app.call("POST", "/svc-api/v1/auth/identities/test", { token });
    expectProblem(again, 409, "identity_taken");
  });
});
