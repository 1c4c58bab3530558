// The console's Mail view in Chromium (test/e2e/support/console.ts serves svc to it): the outbox newest first
// with each mail's state, attempts and last error, filtered by state, paged by `before`, and "Resend" on a
// failed mail making it pending again. No sender runs here, so the outbox holds exactly what the test wrote.
// Without Chromium the test is skipped, except with CI=true.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditEvent } from "../../src/audit/model.ts";
import type { OutboxMail } from "../../src/db/store.ts";
import { createComposer } from "../../src/mail/compose.ts";
import { testConfig } from "../helpers.ts";
import { chromiumAvailable } from "./chromium.ts";
import {
  accessibilityProblems,
  type Console,
  done,
  openConsole,
  ROOT_PASSWORD,
  shoot,
  signIn,
  startConsole,
} from "./support/console.ts";

// No sender runs here, so the secret the bodies are sealed under is never used to open them.
const composer = createComposer({ ...testConfig().mail, secret: testConfig().jwt.secret });
const resetMail = (to: string): OutboxMail =>
  composer.compose(
    "password_reset",
    { address: to, userId: null },
    { username: to, link: "https://svc.example.com/svc/account/reset-password#token=SECRET-TOKEN" },
  );
/** A notice: a failed one can be resent (one carrying a link cannot: its token has expired by then). */
const noticeMail = (to: string): OutboxMail =>
  composer.compose("password_changed", { address: to, userId: null }, { username: to });
const failedEvent = () => auditEvent("mail.failed", { origin: { address: null, requestId: null } });

describe.skipIf(!chromiumAvailable)("the console's Mail view in Chromium", () => {
  let browser: Console["browser"];
  let base: string;
  let close: Console["close"];
  let svc: Console["svc"];

  beforeAll(async () => {
    ({ svc, base, browser, close } = await startConsole());
  }, 30_000);
  afterAll(() => close?.());

  test("lists the outbox with state and last error, filters, pages, and resends a failed mail", async () => {
    // 52 mails beside the sign-ups' verification mails: more than a page of 50. The newest two: one failed, one sent.
    for (let i = 0; i < 50; i++) await svc.store.mail.enqueue(resetMail(`reader${i}@example.com`));
    const failed = noticeMail("gone@example.com");
    const sent = resetMail("kim@example.com");
    for (const mail of [failed, sent]) await svc.store.mail.enqueue(mail);
    await svc.store.mail.markFailed(failed.id, "550 5.1.1 mailbox unavailable", failedEvent());
    await svc.store.mail.markSent(sent.id, new Date().toISOString());

    const { page, outside, refused } = await open();
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("link", { name: "Mail" }).click();
    await page.getByRole("heading", { name: "Mail" }).waitFor();
    const failedRow = page.locator(`tr[data-mail="${failed.id}"]`);
    await failedRow.waitFor();
    expect(await page.locator("tbody tr").count()).toBe(50);
    expect(await page.locator("tbody tr").first().getAttribute("data-mail")).toBe(sent.id);
    expect(await failedRow.locator('td[data-label="State"]').textContent()).toBe("failed");
    expect(await failedRow.locator('td[data-label="Attempts"]').textContent()).toBe("1");
    expect(await failedRow.locator('td[data-label="Last error"]').textContent()).toBe("550 5.1.1 mailbox unavailable");
    expect(await failedRow.locator('td[data-label="Kind"]').textContent()).toBe("password changed");
    expect(
      await page
        .locator(`tr[data-mail="${sent.id}"]`)
        .getByRole("button", { name: /Resend/ })
        .count(),
    ).toBe(0);
    expect(await page.locator("tbody").textContent()).not.toContain("SECRET-TOKEN");
    expect(await accessibilityProblems(page)).toEqual([]);

    // Older mails by the Link's `before`, and back.
    await page.getByRole("button", { name: "Older" }).click();
    await page.locator(`tr[data-mail="${failed.id}"]`).waitFor({ state: "detached" });
    const older = await svc.store.mail.list({ limit: 1000 });
    expect(await page.locator("tbody tr").count()).toBe(older.length - 50);
    expect(await page.getByRole("button", { name: "Older" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Newer" }).click();
    await failedRow.waitFor();

    // Only the failed ones; resend the one there is: pending again, due now.
    await page.getByLabel("State").selectOption("failed");
    await page.getByRole("button", { name: "Show" }).click();
    await page.locator(`tr[data-mail="${sent.id}"]`).waitFor({ state: "detached" });
    expect(await page.locator("tbody tr").count()).toBe(1);
    await shoot(page, "mail");
    await failedRow.getByRole("button", { name: "Resend the mail to gone@example.com" }).click();
    await page.getByRole("status").filter({ hasText: "The mail to gone@example.com is pending again" }).waitFor();
    await failedRow.waitFor({ state: "detached" });
    await page.getByText("No mails.").waitFor();
    const [stored] = await svc.store.mail.list({ recipient: "gone@example.com", limit: 1 });
    expect(stored).toMatchObject({ id: failed.id, status: "pending" });
    await page.getByLabel("State").selectOption("pending");
    await page.getByRole("button", { name: "Show" }).click();
    expect(await failedRow.locator('td[data-label="State"]').textContent()).toBe("pending");

    expect(await outside()).toEqual([]);
    expect(refused).toEqual([]);
    await done(page);
  }, 60_000);

  const open = (width?: number) => openConsole({ browser, base }, width);
});
