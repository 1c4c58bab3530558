// client.categories.live() in Chromium (#58): two tabs of an app on another origin, signed in by cookie, keep
// a live list equal to svc's through 200 changes written by another client, a restart of the compiled binary
// and the expiry of 3-second tokens; a subscription past SVC_SUBSCRIPTIONS_PER_USER shows its refusal in
// onError, and a page whose origin SVC_CORS_ORIGINS does not list hears CORS named, not silent retries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { freePort } from "../ports.ts";
import { runProcess } from "../support/cli.ts";
import { chromiumAvailable, launchChromium } from "./chromium.ts";
import { emptyFolderWithBinary, prepareBinary, type Running, start, stop } from "./support/svc.ts";

const BUILT = join(import.meta.dir, "..", "..", "client", "dist", "index.js");
const PASSWORD = "correct horse battery";
const CHANGES = 200;
const INDEX_HTML = `<!doctype html><title>app</title>
<script type="module">
import { createClient } from "./svc-client.js";
Object.assign(globalThis, { createClient, states: [], reasons: [], errors: [], heard: [] });
</script>`;

/** The parts of @svc/client the pages and the writer use, by their shape (client/src is typed for browsers). */
interface Category {
  id: string;
  name: string;
  version: number;
}
interface Failure {
  code: string;
  status: number;
  title: string;
  detail: string;
  graphqlCode: string | null;
}
type State = { status: string; reason?: Failure };
interface Client {
  auth: {
    readonly session: { tokenExpiresAt: Date } | null;
    login(credentials: { username: string; password: string }): Promise<unknown>;
    onChange(listener: (session: unknown) => void): () => void;
  };
  users: { create(user: { username: string; email: string; password: string }): Promise<unknown> };
  categories: {
    list(): Promise<Category[]>;
    create(input: { name: string }): Promise<Category>;
    update(id: string, input: { name: string }): Promise<Category>;
    delete(id: string): Promise<boolean>;
    subscribe(listener: () => void, options: { onError(error: Failure): void }): () => void;
    live(options: { onState(state: State): void }): { readonly items: Category[]; ready: Promise<void> };
  };
}
type CreateClient = (options: { baseUrl: string; mode?: "json" | "cookie" }) => Client;

/** The page's globals: the module's createClient, and what the test's scripts keep there. */
interface AppWindow {
  createClient: CreateClient;
  client: Client;
  live: { readonly items: Category[]; ready: Promise<void> };
  states: string[];
  /** Why the list's subscription reconnected: the GraphQL code, else the client's code. */
  reasons: string[];
  errors: Failure[];
  heard: unknown[];
}
const win = () => globalThis as unknown as AppWindow;

/** An origin serving the app's page and the built client beside it. */
function appServer(script: string) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    routes: {
      "/": new Response(INDEX_HTML, { headers: { "content-type": "text/html; charset=utf-8" } }),
      "/svc-client.js": new Response(script, { headers: { "content-type": "text/javascript" } }),
    },
    fetch: () => new Response("not found", { status: 404 }),
  });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** A subscription the page opens only to hear its refusal: what onError was handed. */
const refusalOn = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<Failure>((resolve) => {
        const { client } = globalThis as unknown as AppWindow;
        client.categories.subscribe(() => {}, {
          onError: ({ code, status, title, detail, graphqlCode }) =>
            resolve({ code, status, title, detail, graphqlCode }),
        });
      }),
  );

const build = await runProcess(["bun", "scripts/build.ts"], {
  cwd: join(import.meta.dir, "..", "..", "client"),
  env: process.env,
  timeoutMs: 120_000,
});

describe.skipIf(!chromiumAvailable)("categories.live() in two tabs of Chromium against the binary", () => {
  let browser: Browser;
  let app: ReturnType<typeof appServer>;
  let stranger: ReturnType<typeof appServer>;
  let dir: string;
  let env: Record<string, string>;
  let svc: Running;
  let base: string;

  beforeAll(async () => {
    if (build.code !== 0) throw new Error(`the client's build failed: ${build.stdout}${build.stderr}`);
    const script = await Bun.file(BUILT).text();
    app = appServer(script);
    stranger = appServer(script);
    await prepareBinary();
    dir = emptyFolderWithBinary();
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      SVC_PORT: String(port),
      SVC_ENV: "test",
      SVC_PASSWORD_COST: "minimal",
      SVC_SHUTDOWN_GRACE: "1s",
      SVC_JWT_TTL: "3s",
      SVC_CORS_ORIGINS: app.origin,
      SVC_SUBSCRIPTIONS_PER_USER: "2",
      SVC_SIGNUP_CLIENT_MAX: "1000",
    };
    svc = await start(dir, env);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (svc) await stop(svc);
    void app?.stop();
    void stranger?.stop();
  });

  /** A tab of `context` on `origin` with a client of svc in `mode`, its session's news noted. */
  async function tab(page: Page, origin: string, mode: "json" | "cookie"): Promise<Page> {
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => typeof (globalThis as unknown as AppWindow).createClient === "function");
    await page.evaluate(
      ([base, mode]) => {
        const w = globalThis as unknown as AppWindow;
        w.client = w.createClient({ baseUrl: base, mode });
        w.client.auth.onChange((session) => w.heard.push(session));
      },
      [base, mode] as const,
    );
    return page;
  }

  /** The list as each page holds it, and as svc answers it, by id and version. */
  const shape = (categories: Category[]) => JSON.stringify(categories.map((c) => [c.id, c.name, c.version]));
  const listed = (page: Page) => page.evaluate(() => (globalThis as unknown as AppWindow).live.items);
  /** Waits until the page's live list is `want` (the time limit guards against a hang; it is not the check). */
  const holds = (page: Page, want: string) =>
    page.waitForFunction(
      (want) => {
        const items = (globalThis as unknown as AppWindow).live.items;
        return JSON.stringify(items.map((c) => [c.id, c.name, c.version])) === want;
      },
      want,
      { timeout: 60_000 },
    );

  test("two tabs' live lists equal svc's through 200 changes, a restart and token expiry; one too many subscriptions reaches onError", async () => {
    const context = await browser.newContext();
    const a = await tab(await context.newPage(), app.origin, "cookie");
    const b = await tab(await context.newPage(), app.origin, "cookie");
    await a.evaluate(async (password) => {
      const { client } = globalThis as unknown as AppWindow;
      await client.users.create({ username: "ann", email: "ann@example.com", password });
      await client.auth.login({ username: "ann", password });
    }, PASSWORD);
    await b.waitForFunction(() => (globalThis as unknown as AppWindow).heard.some((session) => session !== null));

    const built = (await import(BUILT)) as { createClient: CreateClient };
    const writer = built.createClient({ baseUrl: base });
    await writer.users.create({ username: "wes", email: "wes@example.com", password: PASSWORD });
    await writer.auth.login({ username: "wes", password: PASSWORD });
    for (const name of ["Before-1", "Before-2"]) await writer.categories.create({ name });

    for (const page of [a, b]) {
      await page.evaluate(async () => {
        const w = globalThis as unknown as AppWindow;
        w.live = w.client.categories.live({
          onState: (state) => {
            w.states.push(state.status);
            if (state.reason) w.reasons.push(state.reason.graphqlCode ?? state.reason.code);
          },
        });
        await w.live.ready;
      });
      expect(shape(await listed(page))).toBe(shape(await writer.categories.list()));
    }

    // 200 changes: creations, renames and deletions, with a restart of the binary halfway and the pages'
    // tokens left to expire before the second half.
    const kept: Category[] = [];
    for (let i = 0; i < CHANGES; i++) {
      if (i === CHANGES / 2) {
        await stop(svc);
        svc = await start(dir, env);
        // Each tab's stream ends at its token's expiry (TOKEN_EXPIRED), and resumes on a renewed one.
        for (const page of [a, b]) {
          await page.waitForFunction(
            () => (globalThis as unknown as AppWindow).reasons.includes("TOKEN_EXPIRED"),
            undefined,
            {
              timeout: 15_000,
            },
          );
        }
      }
      if (i % 4 === 1 && kept.length > 0)
        kept.push(await writer.categories.update(kept.shift()!.id, { name: `r-${i}` }));
      else if (i % 4 === 3 && kept.length > 0) await writer.categories.delete(kept.pop()!.id);
      else kept.push(await writer.categories.create({ name: `c-${i}` }));
    }
    const want = shape(await writer.categories.list());
    for (const page of [a, b]) await holds(page, want);

    for (const page of [a, b]) {
      const seen = await page.evaluate(() => {
        const w = globalThis as unknown as AppWindow;
        return { states: w.states, reasons: w.reasons };
      });
      // The restart and the expiry were lived through, each reconnected, and the list was never closed.
      expect(seen.states).toContain("reconnecting");
      expect(seen.states).not.toContain("closed");
      expect(seen.reasons).toContain("TOKEN_EXPIRED");
      expect(seen.reasons).toContain("network_error");
    }

    // Both tabs hold ann's two subscriptions (SVC_SUBSCRIPTIONS_PER_USER=2): a third is refused, in onError.
    const refusal = await refusalOn(a);
    expect(refusal).toMatchObject({
      code: "too_many_subscriptions",
      status: 429,
      graphqlCode: "TOO_MANY_SUBSCRIPTIONS",
    });
    await context.close();
  }, 150_000);

  test("a page on an origin SVC_CORS_ORIGINS does not list: onError names CORS and the fix", async () => {
    const context = await browser.newContext();
    const page = await tab(await context.newPage(), stranger.origin, "json");
    const refusal = await refusalOn(page);
    expect(refusal).toMatchObject({ code: "network_error", status: 0, title: "Refused by the browser (CORS)" });
    expect(refusal.detail).toContain(`add ${stranger.origin} to svc's SVC_CORS_ORIGINS`);
    await context.close();
  }, 30_000);
});
