// The GraphiQL playground in a real browser: Debian's Chromium driven by playwright-core. Without
// Chromium the test is skipped, except with CI=true (.ci/run installs it), where that is a failure.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { chromiumAvailable, servedToChromium } from "./chromium.ts";
import { testApp } from "../helpers.ts";

describe.skipIf(!chromiumAvailable)("the playground in Chromium", () => {
  let browser: Browser;
  let base: string;
  let token: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const svc = await testApp({ config: { graphql: { playground: true } } });
    token = (await svc.signUp("ann")).token;
    await svc.graphql('mutation { createCategory(input: { name: "Browser Books" }) { id } }', { token });
    ({ base, browser, close } = await servedToChromium(svc.app));
  }, 30_000);
  afterAll(() => close?.());

  test("sets a bearer header, runs a categories query and reads the result", async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith("blob:") && !request.url().startsWith("data:"))
        outside.push(request.url());
    });
    const schemaLoaded = page.waitForResponse(
      (r) => r.url() === `${base}/graphql` && (r.request().postData() ?? "").includes("__schema"),
      { timeout: 20_000 },
    );
    const opened = await page.goto(`${base}/graphql/playground`);
    // Compressed and cacheable: the page holds GraphiQL's whole 9 MB bundle and changes only with the version.
    expect(opened?.headers()["content-encoding"]).toBe("gzip");
    expect(opened?.headers()["cache-control"]).toStartWith("public, max-age=");
    await page.locator(".graphiql-execute-button").waitFor({ timeout: 20_000 });
    // Opened without a token: the schema still loads (introspection needs none), and the headers pane
    // holds the template to fill in rather than an error.
    expect((await schemaLoaded).status()).toBe(200);
    await Bun.sleep(500);
    // What the page shows (the inline bundle itself holds that message's text).
    expect((await page.innerText("#root")).includes("Error fetching schema")).toBe(false);
    const headersPane = page.locator(".graphiql-editor-tool .graphiql-editor").last();
    expect((await headersPane.textContent())?.replace(/\s+/g, "")).toContain('"Authorization":"Bearer<token>"');

    const query = page.locator(".graphiql-query-editor .graphiql-editor").first();
    await query.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText("{ categories { name colorHex } }");
    const response = page.locator(".graphiql-response");

    // Without the header: svc refuses, as it should.
    await page.locator(".graphiql-execute-button").click();
    await response.filter({ hasText: "UNAUTHENTICATED" }).waitFor({ timeout: 15_000 });

    await headersPane.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${token}` }));
    await page.locator(".graphiql-execute-button").click();
    await response.filter({ hasText: "Browser Books" }).waitFor({ timeout: 15_000 });
    const text = (await response.textContent())?.replace(/\s+/g, " ") ?? "";
    expect(text).toContain('"name": "Browser Books"');
    expect(text).toContain('"colorHex": "#64748B"');
    expect(outside).toEqual([]);
    // The token stays in the page: nothing in localStorage holds it.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }))).not.toContain(token);
    await page.close();
  }, 60_000);
});
