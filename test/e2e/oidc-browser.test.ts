// Signing in through an OpenID provider end to end (docs/oidc.md): the compiled binary, a real provider
// (oidc-provider, started here, whose login this test steers) and the console in Chromium. The administrator's
// provider account vouches for the address svc holds verified, so the first sign-in links it: the console's
// button goes to the provider and comes back signed in, a reload keeps the session, the account view lists the
// identity, unlinks it and links it again. With an authenticator app on, the sign-in comes back at the
// console's second step. A user who cancels at the provider ends on svc's failure page. Without Chromium the
// test is skipped, except with CI=true.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TOTP, URI } from "otpauth";
import type { Browser, Page } from "playwright-core";
import { startOidcProvider, type TestOidcProvider } from "../support/oidc-provider.ts";
import { chromiumAvailable, launchChromium } from "./chromium.ts";
import { accessibilityProblems, done, openConsole } from "./support/console.ts";
import { json, type Running, startWithAdministrator, stop } from "./support/svc.ts";

const PASSWORD = "correct horse battery";
const CLIENT_SECRET = "svc-e2e-client-secret-0123456789abcdef";
// root's account at the provider: the address svc holds verified for root (startWithAdministrator's).
const ROOT = { sub: "root-at-idp", email: "root@example.com", email_verified: true, preferred_username: "rooty" };

describe.skipIf(!chromiumAvailable)("OpenID sign-in in the console, on the compiled binary", () => {
  let svc: Running;
  let idp: TestOidcProvider;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    // The provider first: the redirect URI it allows is the binary's, on the port picked for it.
    ({ svc, base } = await startWithAdministrator("127.0.0.1", PASSWORD, async (base) => {
      idp = await startOidcProvider([
        {
          client_id: "svc",
          client_secret: CLIENT_SECRET,
          redirect_uris: [`${base}/svc-api/v1/auth/oidc/test/callback`],
        },
      ]);
      return {
        SVC_OIDC_PROVIDERS: "test",
        SVC_OIDC_TEST_ISSUER: idp.issuer,
        SVC_OIDC_TEST_CLIENT_ID: "svc",
        SVC_OIDC_TEST_CLIENT_SECRET: CLIENT_SECRET,
        SVC_OIDC_TEST_LABEL: "Test IdP",
      };
    }));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (svc) await stop(svc);
    await idp?.stop();
  });

  const open = () => openConsole({ browser, base });
  const providerButton = (page: Page) => page.getByRole("button", { name: "Sign in with Test IdP" });
  const signedIn = (page: Page) => page.getByRole("button", { name: "Sign out" }).waitFor();
  async function account(page: Page) {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { name: "Linked sign-ins" }).waitFor();
  }

  test("the console's button signs in at the provider and back; a reload keeps it; the account lists, unlinks and links it", async () => {
    idp.account = ROOT;
    const { page, refused } = await open();
    await providerButton(page).click();
    await signedIn(page);
    expect(await page.locator("header .who").textContent()).toContain("root");
    expect(new URL(page.url()).pathname).toBe("/svc/admin");

    await page.reload();
    await signedIn(page);
    expect(await page.locator("header .who").textContent()).toContain("root");

    await account(page);
    const listed = page.getByRole("list", { name: "Your linked sign-ins" }).getByRole("listitem");
    // The account view reads its lists after it shows: wait for the first entry before reading them whole.
    await listed.first().waitFor();
    expect(await listed.allTextContents()).toEqual([
      expect.stringMatching(/^Test IdP root@example\.com, last used .+Unlink$/),
    ]);
    // Linked already: no button offers to link it again.
    expect(await page.getByRole("button", { name: "Link Test IdP" }).count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);

    // root has a password besides: unlinked, then linked again through the provider, back in this view.
    await page.getByRole("button", { name: "Unlink" }).click();
    await page.getByRole("button", { name: "Yes, unlink" }).click();
    await page.getByRole("status").getByText("Test IdP unlinked").waitFor();
    await page.getByText("No sign-ins linked yet.").waitFor();
    await page.getByRole("button", { name: "Link Test IdP" }).click();
    await page.getByRole("status").getByText("Test IdP linked").waitFor();
    expect(page.url()).toBe(`${base}/svc/admin#/account`);
    // Said as the view comes back, which reads the list after: wait for its entry before counting.
    await listed.first().waitFor();
    expect(await listed.count()).toBe(1);
    expect(refused).toEqual([]);
    await done(page);
  }, 60_000);

  test("with an authenticator app on, the sign-in comes back at the console's second step", async () => {
    idp.account = ROOT;
    // The app turned on through the API, as the console would: its secret from the enrolment's URI.
    const login = await json(base, "POST", "/svc-api/v1/auth/login", { username: "root", password: PASSWORD });
    const token = login.body.token as string;
    const enrolment = await json(base, "POST", "/svc-api/v1/auth/mfa/totp", undefined, token);
    const app = URI.parse(enrolment.body.otpauth_uri) as TOTP;
    const step = Math.floor(Date.now() / 30_000);
    const codeAt = (n: number) => app.generate({ timestamp: n * 30_000 });
    const confirmed = await json(base, "POST", "/svc-api/v1/auth/mfa/totp/confirm", { code: codeAt(step) }, token);
    expect(confirmed.status).toBe(200);

    const { page, refused } = await open();
    await providerButton(page).click();
    const field = page.getByLabel("Code", { exact: true });
    await field.waitFor();
    // The second step's token is out of the address bar (and so out of the history) at once.
    expect(new URL(page.url()).hash).toBe("");
    await field.fill(codeAt(step + 1));
    await page.getByRole("button", { name: "Verify" }).click();
    await signedIn(page);
    expect(await page.locator("header .who").textContent()).toContain("root");
    await page.reload();
    await signedIn(page);
    expect(refused).toEqual([]);
    await done(page);
  }, 60_000);

  test("a user who cancels at the provider ends on svc's failure page", async () => {
    idp.account = null;
    const { page } = await open();
    await providerButton(page).click();
    await page.getByRole("heading", { name: "Sign-in failed" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("did not sign you in (you may have cancelled)");
    expect(await page.locator("code").first().textContent()).toBe("oidc_provider_error");
    expect(new URL(page.url()).pathname).toBe("/svc-api/v1/auth/oidc/test/callback");
    await done(page);
  }, 60_000);
});
