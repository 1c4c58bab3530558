// The admin console in a real browser (test/e2e/support/console.ts): its session, in svc's refresh cookie,
// across a reload and a duplicated tab, renewed by each tab in turn, ended by signing out; the categories
// view following changes across its tokens' renewals; and the console on a phone. Without Chromium the
// test is skipped, except with CI=true (.ci/run installs it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { type Backups } from "../../src/backup/service.ts";
import { chromiumAvailable } from "./chromium.ts";
import { expectProblem, testApp, testConfig, promote } from "../helpers.ts";

import {
  type Console,
  done,
  listed,
  openConsole,
  ROOT_PASSWORD,
  shoot,
  signIn,
  startConsole,
  storageIsEmpty,
} from "./support/console.ts";
import { waitUntil } from "../support/wait.ts";

describe.skipIf(!chromiumAvailable)("the console in Chromium", () => {
  let browser: Console["browser"];
  let base: string;
  let close: Console["close"];
  let svc: Console["svc"];
  let ann: Console["ann"];
  let bob: Console["bob"];

  beforeAll(async () => {
    ({ svc, ann, bob, base, browser, close } = await startConsole());
  }, 30_000);
  afterAll(() => close?.());

  /** A page on the console, at this width; `outside()` lists the requests it made to another origin. */
  const open = (width?: number) => openConsole({ browser, base }, width);

  describe("its session, in svc's refresh cookie", () => {
    // Access tokens of 3 s: the console renews each shortly before it expires, so within seconds each tab
    // has refreshed more than once, and the token of a page that cannot renew has expired.
    let short: Awaited<ReturnType<typeof testApp>>;
    let url: string;
    let stop: () => void;

    beforeAll(async () => {
      short = await testApp({ config: { jwt: { ...testConfig().jwt, ttlSeconds: 3 } } });
      const root = await short.signUp("root", ROOT_PASSWORD);
      await promote(short.store, root.user.id);
      const server = short.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
      url = `http://127.0.0.1:${server.port}/svc/admin`;
      stop = () => void server.stop();
    });
    afterAll(() => stop?.());

    async function signedIn(page: Page) {
      await page.getByRole("heading", { name: "Users" }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).waitFor();
    }

    /** The page's refreshes since it loaded: when each started (ms since the epoch), and svc's status. */
    function refreshes(page: Page): Promise<Array<{ at: number; status: number }>> {
      return page.evaluate(() =>
        performance
          .getEntriesByType("resource")
          .filter((entry) => entry.name.endsWith("/svc-api/v1/auth/refresh"))
          // any: responseStatus, which these (Bun's) types do not describe.
          .map((entry: any) => ({ at: performance.timeOrigin + entry.startTime, status: entry.responseStatus })),
      );
    }

    /** root's live sessions that Chromium started, as svc lists them to a login of the test's own. */
    async function sessionsInChromium(): Promise<unknown[]> {
      const login = await short.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "root", password: ROOT_PASSWORD },
      });
      const sessions = await short.call("GET", "/svc-api/v1/auth/sessions", { token: login.body.token });
      return sessions.body.filter((session: { user_agent: string | null }) => session.user_agent?.includes("Chrome"));
    }

    /** Asks again every 50 ms until `condition` holds, for up to 20 s. */
    const until = (what: string, condition: () => Promise<boolean>) =>
      waitUntil(condition, { what, timeoutMs: 20_000, everyMs: 50 });

    /** A list of accounts read afresh: it shows only once a request with a valid access token went through. */
    async function listsAfresh(page: Page, search: string) {
      await page.getByLabel("Search (start of username or e-mail)").fill(search);
      await page.getByRole("button", { name: "Find" }).click();
      await page.getByText("No accounts match.").waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);
    }

    test("a reload and a duplicated tab stay signed in; both tabs renew the one session in turn, and it lives on", async () => {
      const context = await browser.newContext();
      const first = await context.newPage();
      await first.goto(url);
      await signIn(first, "root", ROOT_PASSWORD);
      await signedIn(first);
      await first.reload();
      await signedIn(first);
      // A duplicated tab: the same URL in a second page of the same browser, which shares its cookies.
      const second = await context.newPage();
      await second.goto(url);
      await signedIn(second);

      // Each tab renews its access token by the cookie, in turn: each after the other, and the other way round.
      const turns = async () =>
        [
          ...(await refreshes(first)).map((refresh) => ({ ...refresh, tab: "1" })),
          ...(await refreshes(second)).map((refresh) => ({ ...refresh, tab: "2" })),
        ].sort((a, b) => a.at - b.at);
      await until("each tab refreshed three times, each after the other", async () => {
        const order = (await turns()).map((turn) => turn.tab).join("");
        return (
          order.includes("12") &&
          order.includes("21") &&
          order.replaceAll("2", "").length >= 3 &&
          order.replaceAll("1", "").length >= 3
        );
      });
      expect(new Set((await turns()).map((turn) => turn.status))).toEqual(new Set([200]));
      for (const page of [first, second]) {
        await signedIn(page);
        await listsAfresh(page, "nobody");
        expect(await storageIsEmpty(page)).toBe(true);
      }
      expect(await sessionsInChromium()).toHaveLength(1);

      // Both tabs reloaded at once refresh at once, by the same cookie: they share its one successor.
      await Promise.all([first.reload(), second.reload()]);
      for (const page of [first, second]) {
        await signedIn(page);
        await listsAfresh(page, "nobody");
        expect(new Set((await refreshes(page)).map((refresh) => refresh.status))).toEqual(new Set([200]));
      }
      expect(await sessionsInChromium()).toHaveLength(1);

      // Signed out in one tab, the other finds the session gone at its next renewal.
      await second.getByRole("button", { name: "Sign out" }).click();
      await second.getByRole("button", { name: "Sign in", exact: true }).waitFor();
      await first.getByRole("button", { name: "Sign in", exact: true }).waitFor();
      expect(await sessionsInChromium()).toEqual([]);
      await done(first);
    }, 60_000);

    test("the categories view outlives its access tokens: re-subscribed with the last cursor, it loses no category created meanwhile", async () => {
      const eve = await short.signUp("eve");
      let token = eve.token;
      const created: string[] = [];
      /** Creates a category as eve, signing her in again once her 3 s token has expired. */
      const create = async (name: string) => {
        for (let attempt = 0; attempt < 2; attempt++) {
          const made = await short.graphql(
            "mutation ($name: String!) { createCategory(input: { name: $name }) { id } }",
            {
              token,
              variables: { name },
            },
          );
          if (made.body.data?.createCategory) return void created.push(name);
          const login = await short.call("POST", "/svc-api/v1/auth/login", {
            body: { username: "eve", password: eve.password },
          });
          token = login.body.token;
        }
        throw new Error(`could not create ${name}`);
      };
      await create("Before");
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${url}#/categories`);
      await signIn(page, "root", ROOT_PASSWORD);
      // Read once the page's subscription is open, with an access token issued before the next login.
      await page.locator('li[data-category="Before"]').waitFor();

      // Categories created one after another until a token issued after the page's has expired (so the
      // page's has, and svc ended its stream with TOKEN_EXPIRED), and one more after that.
      const later = await short.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "root", password: ROOT_PASSWORD },
      });
      let n = 0;
      await until("an access token issued after the page's is refused", async () => {
        await create(`Around ${String(n++).padStart(3, "0")}`);
        return (await short.call("GET", "/svc-api/v1/users/me", { token: later.body.token })).status === 401;
      });
      await create("After");
      await page.locator('li[data-category="After"]').waitFor();
      await until("every category created is listed", async () => (await listed(page)).length === created.length);
      expect(await listed(page)).toEqual(created.toSorted((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);
      // One stream, not one per renewal.
      const streams = async () =>
        Number(
          /^svc_subscriptions_open\{transport="sse".*\} (\d+)$/m.exec(
            (await short.call("GET", "/svc/metrics")).text,
          )?.[1],
        );
      await until("one stream open", async () => (await streams()) === 1);
      // Signing out ends the stream (and the session, which the next test counts on).
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
      await until("no stream open once signed out", async () => (await streams()) === 0);
      await done(page);
    }, 60_000);

    test("signing out after the access token expired ends the session on the server: its cookie no longer refreshes", async () => {
      const context = await browser.newContext();
      // No refresh gets through: the page keeps the access token it signed in with, as a tab left asleep would.
      await context.route("**/svc-api/v1/auth/refresh", (route) => route.abort());
      const page = await context.newPage();
      await page.goto(url);
      await signIn(page, "root", ROOT_PASSWORD);
      await signedIn(page);
      // A token issued after the page's, as long-lived: once it is refused, the page's has expired too.
      const later = await short.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "root", password: ROOT_PASSWORD },
      });
      await until("an access token issued after the page's is refused", async () => {
        const me = await short.call("GET", "/svc-api/v1/users/me", { token: later.body.token });
        return me.status === 401;
      });
      const cookie = (await context.cookies()).find((c) => c.name === "svc_refresh");
      expect(cookie?.httpOnly).toBe(true);

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
      expect((await context.cookies()).map((c) => c.name)).not.toContain("svc_refresh");
      expectProblem(
        await short.call("POST", "/svc-api/v1/auth/refresh", {
          headers: {
            origin: "http://localhost",
            "content-type": "application/json",
            cookie: `svc_refresh=${cookie!.value}`,
          },
        }),
        401,
        "invalid_refresh_token",
      );
      expect(await sessionsInChromium()).toEqual([]);
      expect(await storageIsEmpty(page)).toBe(true);
      await done(page);
    }, 30_000);
  });

  test("reads on a phone: nothing wider than the screen, every view reachable", async () => {
    const { page } = await open(375);
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("heading", { name: "Users" }).waitFor();
    const overflow = () =>
      page.evaluate(() => {
        // any: the page's DOM, which these (Bun's) types do not describe.
        const root = (globalThis as any).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shoot(page, "phone");
    for (const view of ["Invitations", "Categories", "Audit log", "Backups"]) {
      await page.getByRole("link", { name: view }).click();
      await page.getByRole("heading", { name: view }).waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
    }
    await done(page);
  }, 30_000);
});
