// A browser app on a second origin, in Chromium: the fetch client of docs/browser-apps.md, taken from
// the page and run as it stands, on a page that svc's SVC_CORS_ORIGINS lists, against a listening svc;
// and a third origin that it does not list, whose forms and fetches get nothing. All three are
// 127.0.0.1 on different ports: one site, so the SameSite=Strict cookie goes with every request to svc
// and only the Origin check stands between the third page and the session.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, BrowserContext, Page, Response as PageResponse } from "playwright-core";
import { chromiumAvailable, launchChromium } from "./chromium.ts";
import { CORS_REQUEST_HEADERS } from "../../src/http/cors.ts";
import { promote, testApp } from "../helpers.ts";

const DOC = join(import.meta.dir, "..", "..", "docs", "browser-apps.md");
const V1 = "/svc-api/v1";
const REFRESH = `${V1}/auth/refresh`;

/** The doc's fetch client, its one line of configuration pointed at this svc. */
async function documentedClient(api: string): Promise<string> {
  const section = (await Bun.file(DOC).text()).split("\n## A fetch client\n")[1] ?? "";
  const block = /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? "";
  const setting = /^const API = .*$/m;
  expect(block).toMatch(setting);
  return block.replace(setting, `const API = ${JSON.stringify(api)};`);
}

/** The client's functions, as the page's script defines them (globals of a classic script). */
interface Client {
  signIn(username: string, password: string): Promise<void>;
  refresh(): Promise<boolean>;
  api(path: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Response>;
  signOut(): Promise<void>;
}

/** What a script on the page can read of an answer: the status, the headers CORS lets through, the body. */
interface Seen {
  status: number;
  headers: Record<string, string>;
  // any: the answer's JSON, asserted on field by field.
  body: any;
}

/** A request that reached a server, and what it answered. */
interface Arrival {
  method: string;
  path: string;
  origin: string | null;
  cookie: string | null;
  headers: string[];
  preflightHeaders: string | null;
  status?: number;
}

/** A page server on 127.0.0.1 answering every path with `html()`, noting what reached it. */
function pageServer(html: () => string) {
  const arrivals: Arrival[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      arrivals.push(arrival(request));
      return new Response(html(), { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, arrivals, stop: () => server.stop(true) };
}

function arrival(request: Request): Arrival {
  return {
    method: request.method,
    path: new URL(request.url).pathname,
    origin: request.headers.get("origin"),
    cookie: request.headers.get("cookie"),
    headers: [...request.headers.keys()],
    preflightHeaders: request.headers.get("access-control-request-headers"),
  };
}

describe.skipIf(!chromiumAvailable)("a browser app on another origin, in Chromium", () => {
  let browser: Browser;
  let svc: Awaited<ReturnType<typeof testApp>>;
  let svcServer: ReturnType<typeof Bun.serve>;
  let base: string;
  let client: string;
  let bobId: string;
  /** Every account's (testApp's signUp default). */
  const PASSWORD = "correct horse battery";
  /** Every request that reached svc, and its status. */
  const arrivals: Arrival[] = [];
  /** While set, a refresh waits here before svc answers it (see holdRefreshes). */
  let held: (() => Promise<void>) | undefined;

  let app: ReturnType<typeof pageServer>;
  let elsewhere: ReturnType<typeof pageServer>;

  beforeAll(async () => {
    // The pages' servers first: their origins go into svc's configuration.
    app = pageServer(() => `<!doctype html><title>app</title><script>${client}</script>`);
    elsewhere = pageServer(
      () =>
        `<!doctype html><title>elsewhere</title><form method="post" action="${base}${REFRESH}"><button>Go</button></form>`,
    );
    svc = await testApp({ config: { corsOrigins: [app.origin] } });
    const root = await svc.signUp("root", PASSWORD);
    await promote(svc.store, root.user.id);
    await svc.signUp("ann");
    bobId = (await svc.signUp("bob")).user.id;
    // svc's own handlers, as app.listen serves them, behind a recorder (and, when a test asks, a hold).
    svcServer = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request, server) {
        const seen = arrival(request);
        arrivals.push(seen);
        if (held && request.method === "POST" && seen.path === REFRESH) await held();
        const response = await svc.app.handlers.fetch(request, server as Parameters<typeof svc.app.handlers.fetch>[1]);
        seen.status = response?.status;
        // undefined only for a request upgraded to a WebSocket, which these pages never make.
        return response as Response;
      },
    });
    base = `http://127.0.0.1:${svcServer.port}`;
    client = await documentedClient(`${base}${V1}`);
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    void svcServer?.stop(true);
    void app?.stop();
    void elsewhere?.stop();
  });

  /** Holds the next `count` refreshes at svc until all of them have arrived: they left the browser at once. */
  function holdRefreshes(count: number) {
    let arrived = 0;
    const { promise: all, resolve } = Promise.withResolvers<void>();
    held = async () => {
      if (++arrived === count) {
        held = undefined;
        resolve();
      }
      await all;
    };
  }

  /** The requests that reached svc from now on. */
  function watch(): () => Arrival[] {
    const from = arrivals.length;
    return () => arrivals.slice(from);
  }

  /** A browser of its own (its own cookies) with the app open in `tabs` tabs. */
  async function appIn(tabs: number, path = "/"): Promise<{ context: BrowserContext; pages: Page[] }> {
    const context = await browser.newContext();
    const pages: Page[] = [];
    for (let i = 0; i < tabs; i++) {
      const page = await context.newPage();
      await page.goto(`${app.origin}${path}`);
      pages.push(page);
    }
    return { context, pages };
  }

  const signIn = (page: Page, username: string, password: string) =>
    page.evaluate(([u, p]) => (globalThis as unknown as Client).signIn(u, p), [username, password] as const);
  const refresh = (page: Page) => page.evaluate(() => (globalThis as unknown as Client).refresh());
  const signOut = (page: Page) => page.evaluate(() => (globalThis as unknown as Client).signOut());
  /** The client's access token: a global `let` of the page's script, in memory only. */
  const tokenOf = (page: Page) => page.evaluate("token") as Promise<string | null>;

  /** A call through the client's api(), as the page's script reads its answer. */
  function api(page: Page, path: string, init: Parameters<Client["api"]>[1] = {}): Promise<Seen> {
    return page.evaluate(
      async ([path, init]) => {
        const res = await (globalThis as unknown as Client).api(path, init);
        const text = await res.text();
        return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : null };
      },
      [path, init] as const,
    );
  }

  /** Whether the tab's own access token works as it stands, with no refresh behind it. */
  const signedIn = (page: Page) =>
    page.evaluate(`fetch(API + "/users/me", { headers: { authorization: "Bearer " + token } }).then((r) => r.status)`);

  /** The refresh cookie the browser holds for svc, if any. */
  async function refreshCookie(context: BrowserContext) {
    return (await context.cookies(`${base}${REFRESH}`)).find((cookie) => cookie.name === "svc_refresh");
  }

  test("every documented request header passes the preflight, PATCH too, and the ETag is readable", async () => {
    const { context, pages } = await appIn(1);
    const [page] = pages as [Page];
    const seen = watch();
    await signIn(page, "root", PASSWORD);
    const path = `/admin/users/${bobId}`;
    const patch = (ifMatch: string, key: string) =>
      api(page, path, {
        method: "PATCH",
        headers: {
          "content-type": "application/json",
          "if-match": ifMatch,
          "if-none-match": '"not-this-version"',
          "idempotency-key": key,
          "x-request-id": `app-${key}`,
        },
        body: JSON.stringify({ role: "admin" }),
      });

    // The first request to this URL: its preflight asks for PATCH and all six headers (Authorization from api()).
    const stale = await patch('"stale"', "first");
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe("precondition_failed");
    const preflight = seen().find((a) => a.method === "OPTIONS" && a.path === `${V1}${path}`);
    expect(preflight?.status).toBe(204);
    expect(preflight?.preflightHeaders?.split(",").sort()).toEqual([...CORS_REQUEST_HEADERS].sort());

    const read = await api(page, path);
    expect(read.status).toBe(200);
    const etag = read.headers.etag;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await api(page, path, { headers: { "if-none-match": etag! } })).status).toBe(304);

    const changed = await patch(etag!, "second");
    expect(changed.status).toBe(200);
    expect(changed.body.role).toBe("admin");
    expect(changed.headers.etag).toMatch(/^"[^"]+"$/);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.headers["x-request-id"]).toBe("app-second");
    expect(changed.headers["idempotent-replayed"]).toBeUndefined();
    const replayed = await patch(etag!, "second");
    expect(replayed.status).toBe(200);
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
    // Every one of the six reached svc on the PATCH itself.
    const patched = seen().find((a) => a.method === "PATCH" && a.status === 200);
    for (const header of CORS_REQUEST_HEADERS) expect(patched?.headers).toContain(header);
    await context.close();
  }, 30_000);

  test("a cookie login, a refresh by the cookie and a sign-out by the cookie work from the app's origin", async () => {
    // The app open under the cookie's path: cookies do not tell ports apart, so the browser sends the
    // cookie to this page too, and only HttpOnly keeps it out of document.cookie.
    const { context, pages } = await appIn(1, `${V1}/auth/`);
    const [page] = pages as [Page];
    await signIn(page, "ann", PASSWORD);
    const cookie = await refreshCookie(context);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false, path: `${V1}/auth` });
    expect((await api(page, "/users/me")).body.username).toBe("ann");

    await page.reload();
    const reloaded = app.arrivals.findLast((a) => a.path === `${V1}/auth/`);
    expect(reloaded?.cookie).toContain(`svc_refresh=${cookie!.value}`);
    expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe(
      "",
    );

    // After the reload the token is gone: the first call gets 401, and the cookie brings the session back.
    expect(await tokenOf(page)).toBeNull();
    const seen = watch();
    const me = await api(page, "/users/me");
    expect(me.status).toBe(200);
    expect(me.body.username).toBe("ann");
    expect(seen().map((a) => `${a.method} ${a.path} ${a.status}`)).toEqual(
      expect.arrayContaining([`GET ${V1}/users/me 401`, `POST ${REFRESH} 200`, `GET ${V1}/users/me 200`]),
    );
    const rotated = await refreshCookie(context);
    expect(rotated?.value).not.toBe(cookie!.value);

    expect(await refresh(page)).toBe(true);
    expect(await signedIn(page)).toBe(200);
    const token = await tokenOf(page);

    await signOut(page);
    expect(await refreshCookie(context)).toBeUndefined();
    // The session is over: its access token fails, and with no cookie no refresh brings it back.
    expect((await svc.call("GET", `${V1}/users/me`, { token: token! })).status).toBe(401);
    expect((await api(page, "/users/me")).status).toBe(401);
    expect(await refresh(page)).toBe(false);
    await context.close();
  }, 30_000);

  test("a form on an unlisted origin posting to auth/refresh is refused, and the session goes on", async () => {
    const { context, pages } = await appIn(1);
    const [page] = pages as [Page];
    await signIn(page, "ann", PASSWORD);
    const cookie = (await refreshCookie(context))!;

    const form = await context.newPage();
    await form.goto(elsewhere.origin);
    const answered = form.waitForResponse((r) => r.url() === `${base}${REFRESH}`);
    await form.getByRole("button", { name: "Go" }).click();
    const refused: PageResponse = await answered;
    expect(refused.status()).toBe(403);
    expect((await refused.json()).code).toBe("csrf_refused");
    // The cookie went with it (one site, so SameSite does not stop it): svc's check refused it (an unlisted
    // Origin, and a body a form sends).
    const sent = await refused.request().allHeaders();
    expect(sent.origin).toBe(elsewhere.origin);
    expect(sent.cookie).toContain(`svc_refresh=${cookie.value}`);

    expect((await refreshCookie(context))?.value).toBe(cookie.value);
    expect(await signedIn(page)).toBe(200);
    expect(await refresh(page)).toBe(true);
    await context.close();
  }, 30_000);

  test("a fetch from an unlisted origin cannot read svc's answer, nor use the cookie", async () => {
    const { context, pages } = await appIn(1);
    const [page] = pages as [Page];
    await signIn(page, "ann", PASSWORD);
    const cookie = (await refreshCookie(context))!;
    const other = await context.newPage();
    await other.goto(elsewhere.origin);
    const seen = watch();

    const outcomes = await other.evaluate(async (svcBase) => {
      const outcome = (request: Promise<Response>) =>
        request.then(
          (res) => `${res.type} ${res.status}`,
          (error: Error) => error.name,
        );
      return {
        // A simple request: it reaches svc, but without Access-Control-Allow-Origin the script gets an error.
        read: await outcome(fetch(`${svcBase}/users/me`, { credentials: "include" })),
        // A refresh as the app sends it: refused at the preflight, so it is never sent.
        refresh: await outcome(
          fetch(`${svcBase}/auth/refresh`, {
            method: "POST",
            credentials: "include",
            headers: { "content-type": "application/json" },
            body: "{}",
          }),
        ),
        // One a form could send, with the cookie: an opaque answer, and svc refuses it.
        blind: await outcome(
          fetch(`${svcBase}/auth/refresh`, { method: "POST", credentials: "include", mode: "no-cors" }),
        ),
      };
    }, `${base}${V1}`);
    expect(outcomes).toEqual({ read: "TypeError", refresh: "TypeError", blind: "opaque 0" });

    const reached = seen().map((a) => `${a.method} ${a.path} ${a.status}`);
    expect(reached).toContain(`GET ${V1}/users/me 401`);
    expect(reached).toContain(`OPTIONS ${REFRESH} 204`);
    expect(reached.filter((a) => a.startsWith(`POST ${REFRESH}`))).toEqual([`POST ${REFRESH} 403`]);
    const blind = seen().find((a) => a.method === "POST");
    expect(blind?.origin).toBe(elsewhere.origin);
    expect(blind?.cookie).toContain(`svc_refresh=${cookie.value}`);

    expect((await refreshCookie(context))?.value).toBe(cookie.value);
    expect(await signedIn(page)).toBe(200);
    expect(await refresh(page)).toBe(true);
    await context.close();
  }, 30_000);

  test("two tabs refreshing in every order, and at once, all stay signed in, on one live session", async () => {
    const { context, pages } = await appIn(2);
    const [a, b] = pages as [Page, Page];
    const seen = watch();
    await signIn(a, "bob", PASSWORD);
    // Tab B, opened before the sign-in, has no token: its first call refreshes by the shared cookie.
    expect((await api(b, "/users/me")).body.username).toBe("bob");
    const bothSignedIn = async () => expect([await signedIn(a), await signedIn(b)]).toEqual([200, 200]);
    await bothSignedIn();

    for (const [first, second] of [
      [a, b],
      [b, a],
    ] as const) {
      expect(await refresh(first)).toBe(true);
      expect(await refresh(second)).toBe(true);
      await bothSignedIn();
    }

    holdRefreshes(2);
    const cookie = (await refreshCookie(context))!;
    const [fromA, fromB] = await Promise.all([refresh(a), refresh(b)]);
    expect([fromA, fromB]).toEqual([true, true]);
    const atOnce = seen()
      .filter((r) => r.method === "POST" && r.path === REFRESH)
      .slice(-2);
    expect(atOnce.map((r) => r.cookie)).toEqual([`svc_refresh=${cookie.value}`, `svc_refresh=${cookie.value}`]);
    // One rotation landed; the other request got the same successor pair.
    expect(await tokenOf(a)).toBe(await tokenOf(b));
    await bothSignedIn();

    // The session lives on: the next refresh rotates the browser's one cookie, and the browser has one session
    // (beside the one bob's sign-up started, which has no user agent).
    expect(await refresh(b)).toBe(true);
    await bothSignedIn();
    const sessions: { user_agent: string | null; current: boolean }[] = (await api(a, "/auth/sessions")).body;
    expect(sessions.filter((s) => s.user_agent?.includes("Chrome")).map((s) => s.current)).toEqual([true]);
    expect(
      seen()
        .filter((r) => r.method === "POST" && r.path === REFRESH)
        .map((r) => r.status),
    ).toEqual(Array(8).fill(200));

    // A sign-out in one tab signs the other out too: its token fails, and with no cookie its refresh is 400.
    await signOut(a);
    expect(await signedIn(b)).toBe(401);
    expect(await refresh(b)).toBe(false);
    expect(seen().at(-1)).toMatchObject({ method: "POST", path: REFRESH, cookie: null, status: 400 });
    await context.close();
  }, 30_000);
});
