// Failures that say what is wrong, in Chromium (#58): an app on localhost and svc on 127.0.0.1 (two sites)
// signing in by cookie gets cookie_cross_site, not a cookie the browser drops; an origin svc does not list
// gets network_error naming CORS; and a signed-out page asking for its session logs no error.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { testApp } from "../helpers.ts";
import { runProcess } from "../support/cli.ts";
import { chromiumAvailable, launchChromium } from "./chromium.ts";

const CLIENT = join(import.meta.dir, "..", "..", "client");
const PAGE = `<!doctype html><title>app</title>
<script type="module">
import { createClient } from "./svc-client.js";
globalThis.createClient = createClient;
</script>`;

/** What a call on the page ended with: the session's username, or the SvcError's code and detail. */
interface Outcome {
  username?: string | null;
  code?: string;
  detail?: string;
}

/** svc in process on 127.0.0.1, listing `origins` in SVC_CORS_ORIGINS, noting each answer's status. */
async function svcOn(origins: string[]) {
  const svc = await testApp({ config: { corsOrigins: origins } });
  await svc.signUp("ann");
  const statuses: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request, server) {
      const response = (await svc.app.handlers.fetch(
        request,
        server as Parameters<typeof svc.app.handlers.fetch>[1],
      )) as Response;
      statuses.push(`${request.method} ${new URL(request.url).pathname} ${response.status}`);
      return response;
    },
  });
  return { base: `http://127.0.0.1:${server.port}`, statuses, stop: () => server.stop(true) };
}

const build = await runProcess(["bun", "scripts/build.ts"], { cwd: CLIENT, timeoutMs: 120_000 });

describe.skipIf(!chromiumAvailable)("@svc/client's failures in Chromium", () => {
  let browser: Browser;
  let app: ReturnType<typeof Bun.serve>;
  const stops: Array<() => unknown> = [];

  beforeAll(async () => {
    expect(build.code).toBe(0);
    const script = await Bun.file(join(CLIENT, "dist", "index.js")).text();
    app = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) =>
        new URL(request.url).pathname === "/svc-client.js"
          ? new Response(script, { headers: { "content-type": "text/javascript" } })
          : new Response(PAGE, { headers: { "content-type": "text/html" } }),
    });
    stops.push(() => app.stop(true));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const stop of stops) await stop();
  });

  /** The app's page at `origin` (one server, reached as localhost or 127.0.0.1), its console's errors noted. */
  async function open(origin: string): Promise<{ page: Page; consoleErrors: string[] }> {
    const page = await (await browser.newContext()).newPage();
    const consoleErrors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => typeof (globalThis as { createClient?: unknown }).createClient === "function");
    return { page, consoleErrors };
  }

  /** Runs `call` ("login" or "refresh") with a cookie-mode client for `base` on the page. */
  const onPage = (page: Page, base: string, call: "login" | "refresh") =>
    page.evaluate(
      async ([base, call]): Promise<Outcome> => {
        type Client = {
          auth: {
            login(c: { username: string; password: string }): Promise<{ user: { username: string } }>;
            refresh(): Promise<{ user: { username: string } } | null>;
          };
        };
        const { createClient } = globalThis as unknown as { createClient(o: object): Client };
        const client = createClient({ baseUrl: base, mode: "cookie" });
        try {
          const session =
            call === "login"
              ? await client.auth.login({ username: "ann", password: "correct horse battery" })
              : await client.auth.refresh();
          return { username: session?.user.username ?? null };
        } catch (error) {
          const { code, detail } = error as { code: string; detail: string };
          return { code, detail };
        }
      },
      [base, call] as const,
    );

  test("an app on localhost, svc on 127.0.0.1: the cookie login is 400 cookie_cross_site, naming the fix", async () => {
    const appOrigin = `http://localhost:${app.port}`;
    const svc = await svcOn([appOrigin]);
    stops.push(svc.stop);
    const { page } = await open(appOrigin);
    const outcome = await onPage(page, svc.base, "login");
    expect(outcome.code).toBe("cookie_cross_site");
    expect(outcome.detail).toContain("not localhost and 127.0.0.1");
    expect(svc.statuses).toContain("POST /svc-api/v1/auth/login 400");
    expect(await page.context().cookies(svc.base)).toEqual([]);
  });

  test("an origin svc does not list: network_error whose detail says CORS is the likely cause", async () => {
    const svc = await svcOn([]);
    stops.push(svc.stop);
    const appOrigin = `http://127.0.0.1:${app.port}`;
    const { page } = await open(appOrigin);
    const outcome = await onPage(page, svc.base, "login");
    expect(outcome.code).toBe("network_error");
    expect(outcome.detail).toContain(`Likely CORS: this page's origin ${appOrigin} is not svc's (${svc.base})`);
  });

  test("a signed-out page on svc's site asks for its session: null, from a 204, and nothing in the console", async () => {
    const appOrigin = `http://127.0.0.1:${app.port}`;
    const svc = await svcOn([appOrigin]);
    stops.push(svc.stop);
    const { page, consoleErrors } = await open(appOrigin);
    expect(await onPage(page, svc.base, "refresh")).toEqual({ username: null });
    expect(svc.statuses).toEqual(["OPTIONS /svc-api/v1/auth/refresh 204", "POST /svc-api/v1/auth/refresh 204"]);
    expect(consoleErrors).toEqual([]);
    // Signed in, the same question answers the session.
    expect(await onPage(page, svc.base, "login")).toEqual({ username: "ann" });
    expect(await onPage(page, svc.base, "refresh")).toEqual({ username: "ann" });
  });
});
