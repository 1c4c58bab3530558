// The pages mailed links open, in Chromium (src/mail/pages.ts): a reset link's page takes the token out
// of the address bar at once, sets the new password, and the password then signs in; and the console's
// "Forgot password?" asks for the link. Without Chromium the test is skipped, except with CI=true.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { chromiumAvailable, servedToChromium } from "./chromium.ts";
import { testApp } from "../helpers.ts";
import { mailCount, mailedToken } from "../support/mail-links.ts";

describe.skipIf(!chromiumAvailable)("account pages in Chromium", () => {
  let svc: Awaited<ReturnType<typeof testApp>>;
  let served: Awaited<ReturnType<typeof servedToChromium>>;
  beforeAll(async () => {
    svc = await testApp();
    await svc.signUp("ann");
    served = await servedToChromium(svc.app);
  }, 30_000);
  afterAll(() => served?.close());

  /** A page that records every CSP violation and every request that carried a Referer. */
  async function open(url: string) {
    const context = await served.browser.newContext();
    const page = await context.newPage();
    const refused: string[] = [];
    const referers: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    page.on("request", (request) => {
      const referer = request.headers().referer;
      if (referer) referers.push(referer);
    });
    await page.goto(url);
    return { page, refused, referers };
  }
  const leave = async (page: Page) => {
    await page.goto("about:blank");
    await page.context().close();
  };

  test("a reset link: the token leaves the address bar, the new password is set and signs in", async () => {
    expect(
      (await svc.call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email: "ann@example.com" } }))
        .status,
    ).toBe(202);
    const { link, token } = await mailedToken(svc.store, "ann@example.com", "password_reset");
    // The mail's link, on the address this svc listens at (SVC_PUBLIC_URL would be it).
    const url = served.base + link.slice(new URL(link).origin.length);
    const { page, refused, referers } = await open(url);
    await page.getByLabel("New password").waitFor();
    expect(await page.evaluate(() => location.href)).toBe(`${served.base}/svc/account/reset-password`);
    await page.getByLabel("New password").fill("a brand new staple");
    await page.getByLabel("Again").fill("a brand new staple");
    await page.getByRole("button", { name: "Set the password" }).click();
    await page.getByText("Your password is changed").waitFor();
    expect(await page.content()).not.toContain(token);
    expect(refused).toEqual([]);
    expect(referers).toEqual([]);
    const login = await svc.call("POST", "/svc-api/v1/auth/login", {
      body: { username: "ann", password: "a brand new staple" },
    });
    expect(login.status).toBe(200);
    // The same link again: the page says it does not work any more.
    const again = await open(url);
    await again.page.getByLabel("New password").fill("another new staple");
    await again.page.getByLabel("Again").fill("another new staple");
    await again.page.getByRole("button", { name: "Set the password" }).click();
    await again.page.getByText("This link does not work any more").waitFor();
    await leave(again.page);
    await leave(page);
  }, 30_000);

  test("the console's Forgot password? asks for a link, and says the same for any address", async () => {
    const { page, refused } = await open(`${served.base}/svc/admin`);
    await page.getByRole("button", { name: "Forgot password?" }).click();
    const ask = async (email: string) => {
      await page.getByLabel("Your account's e-mail").fill(email);
      await page.getByRole("button", { name: "Send a reset link" }).click();
      await page.getByText("If an account has this address").waitFor();
      return page.getByRole("status").textContent();
    };
    const before = await mailCount(svc.store, "ann@example.com", "password_reset");
    const known = await ask("ann@example.com");
    expect(await mailCount(svc.store, "ann@example.com", "password_reset")).toBe(before + 1);
    expect(await ask("nobody@example.com")).toBe(known);
    expect(refused).toEqual([]);
    await page.getByRole("button", { name: "Back to sign-in" }).click();
    await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
    await leave(page);
  }, 30_000);
});
