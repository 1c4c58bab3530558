// Debian's Chromium for the browser tests, driven by playwright-core. Without it those tests are
// skipped, except with CI=true (.ci/run installs it), where its absence is a failure.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import type { App } from "../../src/app.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI === "true") throw new Error(`${CHROMIUM} is required in CI`);

/**
 * How long one of playwright's waits may take before it fails, naming what it waited for: less than a test's
 * own 30 s. A test that times out instead has its child processes killed by bun test, Chromium among them, and
 * every later test of its file then fails as well, for no reason of its own.
 */
export const STEP_TIMEOUT_MS = 20_000;

/** Chromium, headless, with the flags that keep it from reaching for the network this machine does not have. */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  // Every context, browser.newPage()'s own included (it makes one through newContext), gets the step timeout.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    return context;
  };
  return browser;
}

/** The app listening on a free port, and Chromium to visit it; `close` ends both. */
export async function servedToChromium(app: App): Promise<{ base: string; browser: Browser; close(): Promise<void> }> {
  const server = app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
  const browser = await launchChromium();
  return {
    base: `http://127.0.0.1:${server.port}`,
    browser,
    async close() {
      await browser.close();
      void server.stop();
    },
  };
}
