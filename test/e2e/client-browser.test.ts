// @svc/client in Chromium as an app ships it (#44): built once, imported as an ES module by a page on another
// origin (another port of 127.0.0.1, which svc's SVC_CORS_ORIGINS lists), signed in by cookie; a reload, two
// tabs whose short tokens expire, a subscription; then the npm tarball, and the package imported as installed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { testApp, testConfig } from "../helpers.ts";
import { opened } from "../subscriptions.ts";
import { chromiumAvailable, launchChromium } from "./chromium.ts";
import { runProcess } from "../support/cli.ts";

const CLIENT = join(import.meta.dir, "..", "..", "client");
const BUILT = join(CLIENT, "dist", "index.js");
const V1 = "/svc-api/v1";
/**
 * Where the app's page is served: under the refresh cookie's path (plain HTTP: /svc-api/v1/auth). Cookies do
 * not tell ports apart, so the browser holds the cookie for this page too, and only HttpOnly keeps it out of
 * document.cookie.
 */
const APP_PATH = `${V1}/auth/app/`;
/** The page, importing the built client as an app would. */
const INDEX_HTML = `<!doctype html><title>app</title>
<script type="module">
import { createClient } from "./svc-client.js";
Object.assign(globalThis, { createClient, heard: [], events: [], errors: [] });
</script>`;
const PASSWORD = "correct horse battery";

/**
 * The parts of @svc/client these tests use, by their shape: importing client/src's types would type-check the
 * client under Bun's types (its own tsconfig checks it for browsers).
 */
interface Session {
  user: { id: string; username: string };
  mode: string;
  tokenExpiresAt: Date;
}
interface CategoryEvent {
  kind: string;
  id: string;
  cursor: string;
  category: { name: string; createdBy: string } | null;
}
interface Client {
  auth: {
    readonly session: Session | null;
    login(credentials: { username: string; password: string }): Promise<Session>;
    refresh(): Promise<Session | null>;
    logout(): Promise<void>;
    onChange(listener: (session: Session | null) => void): () => void;
  };
  users: {
    create(user: { username: string; email: string; password: string }): Promise<{ id: string; username: string }>;
    me(): Promise<{ username: string }>;
  };
  categories: {
    list(): Promise<unknown[]>;
    create(input: { name: string }): Promise<{ id: string }>;
    subscribe(
      listener: (event: CategoryEvent) => void,
      options: { onError(error: { code: string }): void },
    ): () => void;
  };
}
type CreateClient = (options: { baseUrl: string; mode?: "json" | "cookie" }) => Client;

/** The page's globals: the module's createClient, and what the test's scripts keep there. */
interface AppWindow {
  createClient: CreateClient;
  client: Client;
  /** What the page's auth.onChange listener heard: the session's username, or null when it ended. */
  heard: (string | null)[];
  events: CategoryEvent[];
  errors: string[];
  unsubscribe: () => void;
  // Bun's types describe no DOM: the few parts of it these scripts read.
  document: { cookie: string };
  localStorage: { length: number };
  sessionStorage: { length: number };
  indexedDB: { databases(): Promise<unknown[]> };
  caches: { keys(): Promise<string[]> };
}

/** A request that reached svc: enough to tell refreshes apart and to borrow the page's last access token. */
interface Arrival {
  method: string;
  path: string;
  authorization: string | null;
  status?: number;
}

/** svc in process, listening on 127.0.0.1 with the app's origin in SVC_CORS_ORIGINS, noting what reaches it. */
async function listeningSvc(appOrigin: string, ttlSeconds?: number) {
  const jwt = ttlSeconds === undefined ? {} : { jwt: { ...testConfig().jwt, ttlSeconds } };
  const svc = await testApp({ config: { corsOrigins: [appOrigin], ...jwt } });
  const arrivals: Arrival[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request, server) {
      const seen: Arrival = {
        method: request.method,
        path: new URL(request.url).pathname,
        authorization: request.headers.get("authorization"),
      };
      arrivals.push(seen);
      const response = await svc.app.handlers.fetch(request, server as Parameters<typeof svc.app.handlers.fetch>[1]);
      seen.status = response?.status;
      // undefined only for a request upgraded to a WebSocket, which the client never makes.
      return response as Response;
    },
  });
  return { ...svc, origin: `http://127.0.0.1:${server.port}`, arrivals, stop: () => server.stop(true) };
}

/** The app's origin: its page under APP_PATH, and the built client beside it as ./svc-client.js. */
function appServer(script: string) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === `${APP_PATH}svc-client.js`) {
        return new Response(script, { headers: { "content-type": "text/javascript; charset=utf-8" } });
      }
      if (path === APP_PATH)
        return new Response(INDEX_HTML, { headers: { "content-type": "text/html; charset=utf-8" } });
      return new Response("not found", { status: 404 });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** Runs a command to its end, with what it printed. */
async function run(command: string[], cwd: string) {
  const {
    code: exitCode,
    stdout,
    stderr,
  } = await runProcess(command, {
    cwd,
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_audit: "false", npm_config_fund: "false" },
    timeoutMs: 120_000,
  });
  return { exitCode, output: `${stdout}${stderr}` };
}

// The build runs before Chromium's check: a failing build is the client's failure, browser or not.
const build = await run(["bun", "scripts/build.ts"], CLIENT);

test("the client builds: bun client/scripts/build.ts exits 0", () => {
  expect({ exitCode: build.exitCode, output: build.output }).toMatchObject({ exitCode: 0 });
});

describe.skipIf(!chromiumAvailable)("@svc/client on a page of another origin, in Chromium, in cookie mode", () => {
  let browser: Browser;
  let app: ReturnType<typeof appServer>;
  /** svc with access tokens as long as usual, and one whose tokens last 3 s. */
  let svc: Awaited<ReturnType<typeof listeningSvc>>;
  let short: Awaited<ReturnType<typeof listeningSvc>>;

  beforeAll(async () => {
    // Read now: the npm pack test builds dist/ again.
    const script = existsSync(BUILT)
      ? await Bun.file(BUILT).text()
      : "throw new Error('client/dist/index.js was not built')";
    app = appServer(script);
    svc = await listeningSvc(app.origin);
    short = await listeningSvc(app.origin, 3);
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    void app?.stop();
    void svc?.stop();
    void short?.stop();
  });

  /** A browser of its own (its own cookies) with the app open in `tabs` tabs. */
  async function appIn(tabs: number): Promise<{ context: BrowserContext; pages: Page[] }> {
    const context = await browser.newContext();
    const pages: Page[] = [];
    for (let i = 0; i < tabs; i++) pages.push(await load(await context.newPage()));
    return { context, pages };
  }

  /** Opens the app (again) and waits for its module to have run. */
  async function load(page: Page): Promise<Page> {
    await page.goto(`${app.origin}${APP_PATH}`);
    await page.waitForFunction(() => typeof (globalThis as unknown as AppWindow).createClient === "function");
    return page;
  }

  /** A client for `base` in cookie mode on the page, its session changes noted in `heard`. */
  const startClient = (page: Page, base: string) =>
    page.evaluate((base) => {
      const w = globalThis as unknown as AppWindow;
      w.client = w.createClient({ baseUrl: base, mode: "cookie" });
      w.client.auth.onChange((session) => w.heard.push(session === null ? null : session.user.username));
    }, base);

  /** Signs up through the page's client, then signs in: the session's username and mode, and users.me()'s. */
  const signUp = (page: Page, username: string) =>
    page.evaluate(
      async ([username, password]) => {
        const { client } = globalThis as unknown as AppWindow;
        await client.users.create({ username, email: `${username}@example.com`, password });
        const session = await client.auth.login({ username, password });
        const me = await client.users.me();
        return { session: session.user.username, mode: session.mode, me: me.username };
      },
      [username, PASSWORD] as const,
    );

  /** Everywhere a page could keep a token for itself: cookies its scripts see, Web Storage, IndexedDB, caches. */
  const pageKeeps = (page: Page) =>
    page.evaluate(async () => {
      const w = globalThis as unknown as AppWindow;
      return {
        cookie: w.document.cookie,
        localStorage: w.localStorage.length,
        sessionStorage: w.sessionStorage.length,
        indexedDB: (await w.indexedDB.databases()).length,
        caches: (await w.caches.keys()).length,
      };
    });
  const NOTHING = { cookie: "", localStorage: 0, sessionStorage: 0, indexedDB: 0, caches: 0 };

  /** The refresh cookie the browser holds for svc at `base`, if any. */
  async function refreshCookie(context: BrowserContext, base: string) {
    return (await context.cookies(`${base}${V1}/auth/refresh`)).find((cookie) => cookie.name === "svc_refresh");
  }

  test("signs up, signs in and reads its account; the refresh token is in an HttpOnly cookie, nowhere else", async () => {
    const { context, pages } = await appIn(1);
    const [page] = pages as [Page];
    await startClient(page, svc.origin);
    expect(await signUp(page, "ann")).toEqual({ session: "ann", mode: "cookie", me: "ann" });
    expect(await refreshCookie(context, svc.origin)).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    // The browser holds it for the app's page too (APP_PATH): HttpOnly alone keeps it from the page's scripts.
    expect((await context.cookies(`${app.origin}${APP_PATH}`)).map((cookie) => cookie.name)).toContain("svc_refresh");
    expect(await pageKeeps(page)).toEqual(NOTHING);
    await context.close();
  }, 30_000);

  test("after a reload, a new client's auth.refresh() brings the session back from the cookie", async () => {
    const { context, pages } = await appIn(1);
    const [page] = pages as [Page];
    await startClient(page, svc.origin);
    await signUp(page, "bea");
    const cookie = await refreshCookie(context, svc.origin);

    await load(page);
    await startClient(page, svc.origin);
    const restored = await page.evaluate(async () => {
      const { client } = globalThis as unknown as AppWindow;
      const before = client.auth.session;
      const session = await client.auth.refresh();
      return { before, session: session?.user.username, me: (await client.users.me()).username };
    });
    expect(restored).toEqual({ before: null, session: "bea", me: "bea" });
    // The cookie did it: it was rotated, and the page still keeps nothing.
    expect((await refreshCookie(context, svc.origin))?.value).not.toBe(cookie?.value);
    expect(await pageKeeps(page)).toEqual(NOTHING);
    await context.close();
  }, 30_000);

  test("two tabs whose 3 s tokens expire keep every call working on one session; a logout in one ends the other", async () => {
    const { context, pages } = await appIn(2);
    const [a, b] = pages as [Page, Page];
    for (const page of pages) await startClient(page, short.origin);
    await signUp(a, "cat");
    // Tab B hears of the session over the BroadcastChannel, with no request of its own.
    await b.waitForFunction(() => (globalThis as unknown as AppWindow).heard.includes("cat"));

    const from = short.arrivals.length;
    const lastToken = () => short.arrivals.findLast((r) => r.authorization)?.authorization?.slice("Bearer ".length);
    for (let round = 0; round < 2; round++) {
      // Both tabs' tokens have expired (the pages' clock is the machine's, svc's too), and svc refuses them.
      for (const page of pages) {
        await page.waitForFunction(
          () => {
            const session = (globalThis as unknown as AppWindow).client.auth.session;
            return session !== null && Date.now() > session.tokenExpiresAt.getTime();
          },
          undefined,
          { polling: 100 },
        );
      }
      expect((await short.call("GET", `${V1}/users/me`, { token: lastToken() })).status).toBe(401);

      const calls = pages.map((page) =>
        page.evaluate(async () => {
          const { client } = globalThis as unknown as AppWindow;
          const [me, categories, again] = await Promise.all([
            client.users.me(),
            client.categories.list(),
            client.users.me(),
          ]);
          return [me.username, Array.isArray(categories), again.username];
        }),
      );
      expect(await Promise.all(calls)).toEqual([
        ["cat", true, "cat"],
        ["cat", true, "cat"],
      ]);
    }
    // Every refresh was a rotation svc accepted (none spent a token twice), and the browser has one session.
    const refreshes = short.arrivals.slice(from).filter((r) => r.method === "POST" && r.path === `${V1}/auth/refresh`);
    expect(refreshes.length).toBeGreaterThan(0);
    expect(refreshes.map((r) => r.status)).toEqual(refreshes.map(() => 200));
    const sessions = await short.call("GET", `${V1}/auth/sessions`, { token: lastToken() });
    expect(sessions.status).toBe(200);
    expect(sessions.body).toHaveLength(1);

    await a.evaluate(() => (globalThis as unknown as AppWindow).client.auth.logout());
    await b.waitForFunction(() => (globalThis as unknown as AppWindow).heard.at(-1) === null);
    expect(await b.evaluate(() => (globalThis as unknown as AppWindow).client.auth.session)).toBeNull();
    expect(await refreshCookie(context, short.origin)).toBeUndefined();
    await context.close();
  }, 45_000);

  test("categories.subscribe on the page receives a category another client created", async () => {
    const { context, pages } = await appIn(1);
    const [page] = pages as [Page];
    await startClient(page, svc.origin);
    await signUp(page, "dee");
    await page.evaluate(() => {
      const w = globalThis as unknown as AppWindow;
      w.unsubscribe = w.client.categories.subscribe((event) => w.events.push(event), {
        onError: (error) => w.errors.push(error.code),
      });
    });
    await opened(svc, 1);

    // Another client: the same build, in Bun, in json mode, signed in as someone else.
    const built = (await import(BUILT)) as { createClient: CreateClient };
    const other = built.createClient({ baseUrl: svc.origin });
    const eve = await other.users.create({ username: "eve", email: "eve@example.com", password: PASSWORD });
    await other.auth.login({ username: "eve", password: PASSWORD });
    const atlas = await other.categories.create({ name: "Atlas" });

    await page.waitForFunction(() => (globalThis as unknown as AppWindow).events.length > 0);
    const seen = await page.evaluate(() => {
      const w = globalThis as unknown as AppWindow;
      return { events: w.events, errors: w.errors };
    });
    expect(seen.errors).toEqual([]);
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]).toMatchObject({
      kind: "CREATED",
      id: atlas.id,
      category: { name: "Atlas", createdBy: eve.id },
    });
    expect(seen.events[0]?.cursor).toEqual(expect.any(String));

    // Unsubscribing ends the stream at svc.
    await page.evaluate(() => (globalThis as unknown as AppWindow).unsubscribe());
    await opened(svc, 0);
    await context.close();
  }, 30_000);

  test("npm pack makes a tarball of dist/, package.json and README.md alone, which imports as installed", async () => {
    const where = mkdtempSync(join(tmpdir(), "svc-client-pack-"));
    try {
      const packed = await run(["npm", "pack", "--pack-destination", where], CLIENT);
      expect({ exitCode: packed.exitCode, output: packed.output }).toMatchObject({ exitCode: 0 });
      const tarballs = readdirSync(where).filter((file) => file.endsWith(".tgz"));
      expect(tarballs).toHaveLength(1);
      const tarball = tarballs[0]!;
      const listed = await run(["tar", "-tzf", join(where, tarball)], where);
      expect(listed.exitCode).toBe(0);
      const files = listed.output
        .trim()
        .split("\n")
        .map((file) => file.replace(/^package\//, ""));
      expect(
        files.filter((file) => !file.startsWith("dist/") && file !== "package.json" && file !== "README.md"),
      ).toEqual([]);
      expect(files).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/index.d.ts"]));

      // Unpacked where nothing else is, the package's entry point signs in to svc.
      expect((await run(["tar", "-xzf", tarball], where)).exitCode).toBe(0);
      const manifest = await Bun.file(join(where, "package", "package.json")).json();
      const installed = (await import(join(where, "package", manifest.exports["."].import))) as {
        createClient: CreateClient;
      };
      const client = installed.createClient({ baseUrl: svc.origin });
      await client.users.create({ username: "fay", email: "fay@example.com", password: PASSWORD });
      await client.auth.login({ username: "fay", password: PASSWORD });
      expect((await client.users.me()).username).toBe("fay");

      // In Node 20 as installed: a script signs in, reads its account, and exits by itself (nothing the
      // client opened keeps the process alive).
      const entry = join(where, "package", manifest.exports["."].import);
      const script = `import { createClient } from ${JSON.stringify(entry)};
const client = createClient({ baseUrl: ${JSON.stringify(svc.origin)} });
await client.auth.login({ username: "fay", password: ${JSON.stringify(PASSWORD)} });
console.log((await client.users.me()).username);`;
      const node = await run(["timeout", "20", "node", "--input-type=module", "-e", script], where);
      expect({ exitCode: node.exitCode, output: node.output.trim() }).toEqual({ exitCode: 0, output: "fay" });
    } finally {
      rmSync(where, { recursive: true, force: true });
    }
  }, 30_000);
});
