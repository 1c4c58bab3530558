// The GraphiQL playground in a real browser: Debian's Chromium driven by playwright-core. Without
// Chromium the test is skipped, except with CI=true (.ci/run installs it), where that is a failure.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { testApp } from "./helpers.ts";

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === "true") throw new Error(`${CHROMIUM} is required in CI`);

describe.skipIf(!available)("the playground in Chromium", () => {
  let browser: Browser;
  let base: string;
  let token: string;
  let stop: () => void;

  beforeAll(async () => {
    const svc = await testApp({ config: { graphql: { playground: true } } });
    token = (await svc.signUp("ann")).token;
    await svc.graphql('mutation { createCategory(input: { name: "Browser Books" }) { id } }', { token });
    const server = svc.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
    base = `http://127.0.0.1:${server.port}`;
    stop = () => void server.stop();
    // The flags keep Chromium from reaching for the network this machine does not have.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    stop?.();
  });

  test("sets a bearer header, runs a categories query and reads the result", async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith("blob:") && !request.url().startsWith("data:")) outside.push(request.url());
    });
    await page.goto(`${base}/graphql/playground`);
    await page.locator(".graphiql-execute-button").waitFor({ timeout: 20_000 });

    const query = page.locator(".graphiql-query-editor .graphiql-editor").first();
    await query.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText("{ categories { name colorHex } }");
    const response = page.locator(".graphiql-response");

    // Without the header: svc refuses, as it should.
    await page.locator(".graphiql-execute-button").click();
    await response.filter({ hasText: "UNAUTHENTICATED" }).waitFor({ timeout: 15_000 });

    await page.locator(".graphiql-editor-tool .graphiql-editor").last().click();
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${token}` }));
    await page.locator(".graphiql-execute-button").click();
    await response.filter({ hasText: "Browser Books" }).waitFor({ timeout: 15_000 });
    const text = (await response.textContent())?.replace(/\s+/g, " ") ?? "";
    expect(text).toContain('"name": "Browser Books"');
    expect(text).toContain('"colorHex": "#64748B"');
    expect(outside).toEqual([]);
    await page.close();
  }, 60_000);
});
