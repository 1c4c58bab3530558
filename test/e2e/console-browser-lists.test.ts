// The console's lists while their reads are on their way, in Chromium: answers held back with playwright's
// routes, so the page is caught between asking and hearing. Only the latest read's answer, or failure, is
// shown; no next page is offered from a list being replaced. The console's other tests: console-browser*.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page, Route } from "playwright-core";
import { auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { chromiumAvailable } from "./chromium.ts";
import { accounts, type Console, done, openConsole, ROOT_PASSWORD, signIn, startConsole } from "./support/console.ts";

describe.skipIf(!chromiumAvailable)("the console's lists, answers on their way", () => {
  let served: Console;
  beforeAll(async () => {
    served = await startConsole();
    await accounts(served.svc, "late-", 22);
  }, 30_000);
  afterAll(() => served?.close());

  /** The console, signed in as root, and `hold`: what it asks for that `matches` waits until released. */
  async function signedIn() {
    const { page } = await openConsole(served);
    await signIn(page, "root", ROOT_PASSWORD);
    await page.locator('tr[data-user="root"]').waitFor();
    const hold = async (matches: (url: URL) => boolean) => {
      const asked = Promise.withResolvers<(answer: (route: Route) => Promise<void>) => void>();
      await page.route(
        matches,
        async (route) => {
          const released = Promise.withResolvers<(route: Route) => Promise<void>>();
          asked.resolve(released.resolve);
          await (await released.promise)(route);
        },
        { times: 1 },
      );
      // Resolves once it is asked for, to the release: given how to answer (go on to svc, or fail).
      return asked.promise;
    };
    return { page, hold };
  }
  const searching = (search: string) => (url: URL) =>
    url.pathname === "/svc-api/v1/admin/users" && url.searchParams.get("search") === search;
  const onToSvc = (route: Route) => route.continue();

  test("a search on its way offers no page of the list it replaces; its own comes next", async () => {
    const { page, hold } = await signedIn();
    const next = page.getByRole("button", { name: "Next page" });
    expect(await next.isEnabled()).toBe(true);
    const late = hold(searching("late-"));
    await page.getByLabel("Search (start of username or e-mail)").fill("late-");
    const release = await late;
    expect(await next.isDisabled()).toBe(true);
    release(onToSvc);
    await page.locator('tr[data-user="root"]').waitFor({ state: "detached" });
    await next.click();
    await page.locator('tr[data-user="late-21"]').waitFor();
    expect(await page.locator("tbody tr").count()).toBe(2);
    await done(page);
  }, 30_000);

  test("an earlier search's answer, or failure, arriving after a later one's changes nothing", async () => {
    const { page, hold } = await signedIn();
    const search = page.getByLabel("Search (start of username or e-mail)");
    const find = async (text: string) => {
      await search.fill(text);
      await page.getByRole("button", { name: "Find" }).click();
    };
    const shownLater = async (text: string, answer: (route: Route) => Promise<void>) => {
      const earlier = hold(searching(text));
      await find(text);
      const release = await earlier;
      await find("late-0");
      // root is on the first page of everyone, the list shown before: gone once the later search's answer shows.
      await page.locator('tr[data-user="root"]').waitFor({ state: "detached" });
      expect(await listedAccounts(page)).toEqual(LATE_0);
      const answered = page.waitForEvent("requestfinished", (request) => searching(text)(new URL(request.url())));
      release(answer);
      await answered;
      // The page has had the late answer: one more turn of its event loop for it to show, were it kept.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
      expect(await listedAccounts(page)).toEqual(LATE_0);
      expect(await page.getByRole("alert").count()).toBe(0);
      await find("");
      await page.locator('tr[data-user="root"]').waitFor();
    };
    await shownLater("late-1", onToSvc);
    await shownLater("late-2", (route) =>
      route.fulfill({
        status: 400,
        contentType: "application/problem+json",
        body: JSON.stringify({ title: "Bad request", status: 400, detail: "an old search", code: "validation_failed" }),
      }),
    );
    await done(page);
  }, 30_000);

  test("the audit log read afresh with new filters offers no older page of the old ones meanwhile", async () => {
    for (let i = 0; i < 60; i++) {
      await served.svc.store.audit.record(auditEvent("login.failed", { origin: CLI_ORIGIN, failed: true }));
    }
    const { page, hold } = await signedIn();
    await page.getByRole("link", { name: "Audit log" }).click();
    const older = page.getByRole("button", { name: "Older" });
    await page.locator("tbody tr").nth(49).waitFor();
    expect(await older.isEnabled()).toBe(true);
    const filtered = hold((url) => url.pathname === "/svc-api/v1/admin/audit" && url.searchParams.has("action"));
    await page.getByLabel("Action").selectOption("category.deleted");
    await page.getByRole("button", { name: "Show" }).click();
    const release = await filtered;
    expect(await older.isDisabled()).toBe(true);
    release(onToSvc);
    await page.getByText("No events match.").waitFor();
    expect(await older.isDisabled()).toBe(true);
    await done(page);
  }, 30_000);
});

const LATE_0 = Array.from({ length: 10 }, (_, i) => `late-0${i}`);

/** The usernames of the accounts the users view lists, in its order. */
function listedAccounts(page: Page): Promise<string[]> {
  // any: the page's elements, which these (Bun's) types do not describe.
  return page.locator("tbody tr[data-user]").evaluateAll((rows) => rows.map((row: any) => row.dataset.user));
}
