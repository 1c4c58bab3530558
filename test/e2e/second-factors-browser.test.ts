// Second factors end to end (docs/second-factors.md): the compiled binary, its console in Chromium with a
// virtual authenticator (the DevTools protocol's WebAuthn domain). An administrator registers a passkey in
// the console, signs out, and signs in with the passkey alone; then enrols an authenticator app there, whose
// codes this test computes from the enrolment's otpauth:// URI, signs out, and signs in with the password and
// a code. Without Chromium the test is skipped, except with CI=true.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TOTP, URI } from "otpauth";
import type { Browser, CDPSession, Page } from "playwright-core";
import { chromiumAvailable, launchChromium } from "./chromium.ts";
import { accessibilityProblems, done, signIn } from "./support/console.ts";
import { type Running, startWithAdministrator, stop } from "./support/svc.ts";

const PASSWORD = "correct horse battery";

describe.skipIf(!chromiumAvailable)("second factors in the console, on the compiled binary", () => {
  let svc: Running;
  let browser: Browser;
  /** The console's address: localhost, not 127.0.0.1, since a WebAuthn relying party is a domain, never an IP address. */
  let base: string;

  beforeAll(async () => {
    ({ svc, base } = await startWithAdministrator("localhost", PASSWORD));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (svc) await stop(svc);
  });

  /** A console page with a platform authenticator that holds discoverable credentials and verifies its user. */
  async function open(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string; refused: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await page.goto(`${base}/svc/admin`);
    return { page, cdp, authenticatorId, refused };
  }

  // Signed in, in whichever view the console was last left (Users at first, Account later).
  const signedIn = (page: Page) => page.getByRole("button", { name: "Sign out" }).waitFor();
  async function signOut(page: Page) {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Username or e-mail").waitFor();
  }
  async function account(page: Page) {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { name: "Second factor" }).waitFor();
  }

  test("a passkey made in the console signs in alone; then an authenticator app, and the password with its code", async () => {
    const { page, cdp, authenticatorId, refused } = await open();
    // A second browser signed in now, with the password, before the account has any factor: later it has
    // shown none, and svc holds back what needs a step-up there.
    const stale = await open();
    await signIn(stale.page, "root", PASSWORD);
    await signedIn(stale.page);
    await signIn(page, "root", PASSWORD);
    await signedIn(page);

    // A passkey: the virtual authenticator makes it, svc keeps it, the console lists it.
    await account(page);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel("Passkey name").fill("Test laptop");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.getByRole("status").getByText("Passkey added").waitFor();
    // The list is read again after the status shows: wait for the new passkey before reading it whole.
    const passkeys = page.getByRole("list", { name: "Your passkeys" }).getByRole("listitem");
    await passkeys.filter({ hasText: "Test laptop" }).waitFor();
    expect(await passkeys.allTextContents()).toEqual([expect.stringContaining("Test laptop")]);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect(credentials[0]!.rpId).toBe("localhost");

    // Signed out, back in with the passkey alone: no username typed, no password.
    await signOut(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await signedIn(page);
    expect(await page.locator("header .who").textContent()).toContain("root");
    const used = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(used.credentials[0]!.signCount).toBeGreaterThan(credentials[0]!.signCount);

    // The stale browser sets up an app beside the passkey: held back until it shows a factor, then done. The
    // passkey moves to its authenticator (as a synced passkey would), with the counter it has reached.
    await account(stale.page);
    await stale.page.getByRole("button", { name: "Set up an authenticator app" }).click();
    const held = stale.page.getByRole("form", { name: "Confirm it is you" });
    expect(await held.textContent()).toContain("Setting up an authenticator app needs a second factor");
    await stale.cdp.send("WebAuthn.addCredential", {
      authenticatorId: stale.authenticatorId,
      credential: used.credentials[0]!,
    });
    await held.getByRole("button", { name: "Confirm with a passkey" }).click();
    await stale.page.getByRole("img", { name: "QR code of the authenticator app's secret" }).waitFor();
    await stale.page.getByRole("button", { name: "Cancel" }).click();
    await stale.page.context().close();

    // An authenticator app: the enrolment's URI gives this test the secret an app would read from the QR code.
    await account(page);
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    await page.getByRole("img", { name: "QR code of the authenticator app's secret" }).waitFor();
    const uri = await page
      .getByRole("link", { name: "Open in an authenticator app on this device" })
      .getAttribute("href");
    expect(uri).toStartWith("otpauth://totp/");
    const totp = URI.parse(uri!);
    expect(totp).toBeInstanceOf(TOTP);
    const app = totp as TOTP;
    const secretShown = await page.locator("code.code").first().textContent();
    expect(secretShown).toBe(app.secret.base32);
    // Codes by their 30-second step: the one confirming, and the next one for the sign-in (a code is good once).
    const step = Math.floor(Date.now() / 30_000);
    const codeAt = (n: number) => app.generate({ timestamp: n * 30_000 });
    await page.getByLabel("Code", { exact: true }).fill(codeAt(step));
    await page.getByRole("button", { name: "Turn on" }).click();
    const codes = page.getByRole("region", { name: "Recovery codes" });
    await codes.waitFor();
    const shown = await codes.locator("code").allTextContents();
    expect(shown).toHaveLength(10);
    expect(await codes.textContent()).toContain("shown only now");
    await page.getByRole("button", { name: "I have kept them" }).click();
    await codes.waitFor({ state: "detached" });

    // Signed out, back in with the password and then a code: the field an app or password manager fills.
    await signOut(page);
    await signIn(page, "root", PASSWORD);
    const field = page.getByLabel("Code", { exact: true });
    await field.waitFor();
    expect(await field.getAttribute("autocomplete")).toBe("one-time-code");
    expect(await page.getByRole("button", { name: "Use a recovery code" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Use a passkey" }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    // The code used to confirm is refused now (RFC 6238 §5.2); the next step's is taken.
    await field.fill(codeAt(step));
    await page.getByRole("button", { name: "Verify" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("Invalid code");
    await field.fill(codeAt(step + 1));
    await page.getByRole("button", { name: "Verify" }).click();
    await signedIn(page);

    // A sign-in with a second factor counts as a step-up: the passkey can be removed at once.
    await account(page);
    await page.getByRole("button", { name: "Remove" }).click();
    await page.getByRole("button", { name: "Yes, remove" }).click();
    await page.getByRole("status").getByText("Passkey Test laptop removed").waitFor();
    await page.getByText("No passkeys yet.").waitFor();

    expect(refused).toEqual([]);
    await done(page);
  }, 60_000);
});
