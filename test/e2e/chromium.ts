// Debian's Chromium for the browser tests, driven by playwright-core. Without it those tests are
// skipped, except with CI=true (.ci/run installs it), where its absence is a failure.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI === "true") throw new Error(`${CHROMIUM} is required in CI`);

/** Chromium, headless, with the flags that keep it from reaching for the network this machine does not have. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}
