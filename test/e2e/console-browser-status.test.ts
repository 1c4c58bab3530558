// The console's status strip, in Chromium, when what answers /svc/health is not svc's health (a proxy's
// error page) or answers out of order: it says svc does not answer, or shows the latest read's answer.
// Its reads are answered with playwright's routes; its 30 s timer runs on playwright's clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page, Route } from "playwright-core";
import { chromiumAvailable } from "./chromium.ts";
import { type Console, done, openConsole, ROOT_PASSWORD, signIn, startConsole } from "./support/console.ts";

const isHealth = (url: URL) => url.pathname === "/svc/health";

describe.skipIf(!chromiumAvailable)("the console's status strip", () => {
  let served: Console;
  beforeAll(async () => {
    served = await startConsole();
  }, 30_000);
  afterAll(() => served?.close());

  const strip = (page: Page) => page.getByRole("region", { name: "Service status" });
  const unanswered = (page: Page) => page.getByText("svc does not answer");

  for (const [what, answer] of [
    ["a proxy's error page", { status: 502, contentType: "text/html", body: "<html><h1>502 Bad Gateway</h1></html>" }],
    ["a proxy's JSON error", { status: 502, contentType: "application/json", body: '{"message":"no upstream"}' }],
    ["a 200 that is not svc's health", { status: 200, contentType: "application/json", body: '{"ok":true}' }],
  ] as const) {
    test(`says svc does not answer when ${what} comes instead of its health`, async () => {
      const { page } = await openConsole(served);
      await page.route(isHealth, (route) => route.fulfill(answer));
      await signIn(page, "root", ROOT_PASSWORD);
      await unanswered(page).waitFor();
      // The console goes on: its views are there, the strip alone says what it could not read.
      await page.locator('tr[data-user="root"]').waitFor();
      expect(await strip(page).count()).toBe(0);
      await done(page);
    }, 30_000);
  }

  test("an earlier read's failure arriving after a later read's answer changes nothing", async () => {
    const { page } = await openConsole(served);
    await page.clock.install();
    await countHealthReads(page);
    const first = Promise.withResolvers<Route>();
    await page.route(isHealth, (route) => first.resolve(route), { times: 1 });
    await signIn(page, "root", ROOT_PASSWORD);
    const held = await first.promise;
    // The strip's next read, 30 s on: svc answers it.
    await page.clock.runFor(30_000);
    await strip(page).filter({ hasText: "health ok" }).waitFor();
    await held.abort("connectionreset");
    // Until the page's fetch has failed too: the strip has had the late failure by the time this answers.
    await page.evaluate(() => (globalThis as unknown as Counted).healthReadsSettled(2));
    expect(await unanswered(page).count()).toBe(0);
    expect(await strip(page).textContent()).toMatch(/health ok/);
    await done(page);
  }, 30_000);
});

interface Counted {
  /** Resolves once `count` of the page's reads of /svc/health have ended, answered or failed. */
  healthReadsSettled(count: number): Promise<void>;
}

/**
 * Counts the page's settled reads of /svc/health. The count moves in the same turn as the page's own
 * handling of the answer (its handler was added first), so a test that awaits it sees what came of it.
 */
function countHealthReads(page: Page): Promise<void> {
  return page.evaluate(() => {
    // any: the page's globals, which these (Bun's) types do not describe.
    const page = globalThis as any;
    const original = page.fetch;
    let settled = 0;
    const waiting: Array<() => void> = [];
    page.healthReadsSettled = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (settled >= count ? resolve() : waiting.push(check));
        check();
      });
    page.fetch = (input: unknown, init?: unknown) => {
      const answer = original(input, init);
      if (String(input instanceof Request ? input.url : input).includes("/svc/health")) {
        const ended = () => {
          settled++;
          for (const check of waiting.splice(0)) check();
        };
        answer.then(ended, ended);
      }
      return answer;
    };
  });
}
