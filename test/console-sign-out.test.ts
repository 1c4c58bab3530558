// The console's session (src/console/page/api.ts, on @svc/client) without a browser: the page's own module,
// bundled as the page is and run by Bun against a listening svc, with the browser's part of a same-origin fetch
// stood in for (the page's location, the Origin header on a POST, one cookie jar that honours Path). The page
// itself is test/e2e/console-browser.test.ts.
import { afterAll, beforeEach, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectProblem, promote, testApp } from "./helpers.ts";
import { failure } from "./support/failure.ts";

const svc = await testApp();
const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
afterAll(() => server.stop(true));
const ORIGIN = `http://127.0.0.1:${server.port}`;

/** The browser's cookies for svc's origin, by name. */
const jar = new Map<string, { value: string; path: string }>();
/** Every request the page made, as sent. */
const sent: Array<{ path: string; method: string; headers: Headers; body: unknown }> = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: string | URL, init: RequestInit = {}) => {
  const url = new URL(input, ORIGIN);
  const path = `${url.pathname}${url.search}`;
  const headers = new Headers(init.headers);
  const method = init.method ?? "GET";
  if (method !== "GET") headers.set("origin", ORIGIN);
  const cookies = [...jar].filter(([, cookie]) => path.startsWith(cookie.path));
  if (cookies.length) headers.set("cookie", cookies.map(([name, cookie]) => `${name}=${cookie.value}`).join("; "));
  sent.push({ path, method, headers, body: typeof init.body === "string" ? JSON.parse(init.body) : undefined });
  const response = await realFetch(url, { ...init, headers });
  for (const line of response.headers.getSetCookie()) {
    const cookie = Bun.Cookie.parse(line);
    if (cookie.maxAge === 0) jar.delete(cookie.name);
    else jar.set(cookie.name, { value: cookie.value, path: cookie.path });
  }
  return response;
}) as typeof fetch;
afterAll(() => {
  globalThis.fetch = realFetch;
});
beforeEach(() => {
  sent.length = 0;
});

// The page's module as the console's build makes it: @svc/client from its source (the svc-source condition,
// which Bun's runtime cannot be told of but by a flag), for a browser. The page's client is on its origin.
const built = mkdtempSync(join(tmpdir(), "svc-console-api-"));
afterAll(() => rmSync(built, { recursive: true, force: true }));
const bundle = await Bun.build({
  entrypoints: [join(import.meta.dir, "..", "src", "console", "page", "api.ts")],
  outdir: built,
  target: "browser",
  conditions: ["svc-source"],
});
if (!bundle.success) throw new AggregateError(bundle.logs, "the console's api.ts did not build");
Object.assign(globalThis, { location: { origin: ORIGIN } });
afterAll(() => Reflect.deleteProperty(globalThis, "location"));
// any: the page's module, typed by its own project (src/console/page/tsconfig.json), not this one.
const page: any = await import(bundle.outputs[0]!.path);

const root = await svc.signUp("root");
await promote(svc.store, root.user.id);

/** A refresh by this cookie, as a page of svc's own origin sends it. */
const refreshBy = (cookie: string) =>
  svc.call("POST", "/svc-api/v1/auth/refresh", {
    headers: { origin: "http://localhost", "content-type": "application/json", cookie: `svc_refresh=${cookie}` },
  });

test("with no cookie there is no session to resume, and the page asks svc once", async () => {
  expect(await page.resume()).toBeNull();
  expect(sent.map(({ method, path }) => `${method} ${path}`)).toEqual(["POST /svc-api/v1/auth/refresh"]);
});

test("signs in in cookie mode: the refresh token only in the cookie, which resumes the session", async () => {
  const me = await page.signIn("root", root.password);
  expect(me.username).toBe("root");
  const [login] = sent;
  expect(login!.path).toBe("/svc-api/v1/auth/login");
  expect(login!.body).toEqual({ username: "root", password: root.password, mode: "cookie" });
  expect(login!.headers.get("content-type")).toBe("application/json");
  expect(jar.get("svc_refresh")?.path).toBe("/svc-api/v1/auth");
  const first = jar.get("svc_refresh")!.value;
  // A reload: the module's memory is not consulted, the cookie is.
  expect((await page.resume()).username).toBe("root");
  expect(jar.get("svc_refresh")!.value).not.toBe(first);
  const resumed = sent.at(-1)!;
  expect(resumed.path).toBe("/svc-api/v1/auth/refresh");
  expect(resumed.headers.get("content-type")).toBe("application/json");
  expect(resumed.headers.has("authorization")).toBe(false);
  await page.signOut();
});

test("requests made after the access token expired share one refresh, and go through after it", async () => {
  await page.signIn("root", root.password);
  sent.length = 0;
  // Idle past the access token's 15 minutes.
  setSystemTime(new Date(Date.now() + 901_000));
  try {
    const answers = await Promise.all([1, 2, 3].map(() => page.request("GET", "/users/me")));
    expect(answers.map((answer: { body: { username: string } }) => answer.body.username)).toEqual([
      "root",
      "root",
      "root",
    ]);
    // Each sent once, with the new token: the client renews a token it knows has expired before sending, rather
    // than have svc refuse it (the refusal and the one retry after it: test/client/request.test.ts).
    expect(sent.filter(({ path }) => path === "/svc-api/v1/users/me")).toHaveLength(3);
    expect(sent.findIndex(({ path }) => path === "/svc-api/v1/auth/refresh")).toBe(0);
    expect(sent.filter(({ path }) => path === "/svc-api/v1/auth/refresh")).toHaveLength(1);
    await page.signOut();
  } finally {
    setSystemTime();
  }
});

test("signing out after the access token expired still ends the session on the server, by the cookie", async () => {
  await page.signIn("root", root.password);
  const cookie = jar.get("svc_refresh")!.value;
  expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
  sent.length = 0;
  // Idle past the access token's 15 minutes.
  setSystemTime(new Date(Date.now() + 901_000));
  try {
    await page.signOut();
    const [logout] = sent;
    expect(sent).toHaveLength(1);
    expect(logout!.path).toBe("/svc-api/v1/auth/logout");
    expect(logout!.headers.has("authorization")).toBe(false);
    expect(logout!.headers.get("content-type")).toBe("application/json");
    expect(jar.size).toBe(0);
    expectProblem(await refreshBy(cookie), 401, "invalid_refresh_token");
  } finally {
    setSystemTime();
  }
  // Only the sign-up's session is left.
  expect((await svc.call("GET", "/svc-api/v1/auth/sessions", { token: root.token })).body).toHaveLength(1);
});

test("another administrator signed in in another tab (the one cookie): the page moves to that account at its next refresh", async () => {
  const changes: Array<{ username: string } | null> = [];
  page.whenSessionChanges((me: { username: string } | null) => changes.push(me));
  await page.signIn("root", root.password);
  const ops = await svc.signUp("ops");
  await promote(svc.store, ops.user.id);
  const other = await svc.call("POST", "/svc-api/v1/auth/login", {
    body: { username: "ops", password: ops.password, mode: "cookie" },
    headers: { origin: "http://localhost" },
  });
  jar.set("svc_refresh", { value: Bun.Cookie.parse(other.headers.getSetCookie()[0]!).value, path: "/svc-api/v1/auth" });
  setSystemTime(new Date(Date.now() + 901_000));
  try {
    expect((await page.request("GET", "/users/me")).body.username).toBe("ops");
    expect(changes.map((me) => me?.username)).toEqual(["ops"]);
    await page.signOut();
  } finally {
    setSystemTime();
    page.whenSessionChanges(() => {});
  }
});

test("a user who is not an administrator is signed out at once, by the cookie just set", async () => {
  const ann = await svc.signUp("ann");
  expect(await failure(page.signIn("ann", ann.password))).toMatchObject({
    message: expect.stringContaining("Not an administrator"),
  });
  expect(jar.size).toBe(0);
  expect((await svc.call("GET", "/svc-api/v1/auth/sessions", { token: ann.token })).body).toHaveLength(1);
});

test("the page's session is @svc/client's: a sign-out while a renewal is on its way waits for it, and stays", async () => {
  const sessions = async () => (await svc.call("GET", "/svc-api/v1/auth/sessions", { token: root.token })).body;
  const before = (await sessions()).length;
  await page.signIn("root", root.password);
  expect(await sessions()).toHaveLength(before + 1);
  expect(page.client.auth.session.user.username).toBe("root");
  // svc's answer to the renewal is held on its way to the page until the sign-out has begun.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let renewing!: () => void;
  const renewalSent = new Promise<void>((resolve) => (renewing = resolve));
  const shim = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL, init?: RequestInit) => {
    const response = await shim(input, init);
    if (new URL(input, ORIGIN).pathname.endsWith("/auth/refresh")) {
      renewing();
      await held;
    }
    return response;
  }) as typeof fetch;
  const cookie = jar.get("svc_refresh")!.value;
  setSystemTime(new Date(Date.now() + 901_000));
  try {
    const asking = page.request("GET", "/users/me").catch(() => null);
    await renewalSent;
    const leaving = page.signOut();
    release();
    await asking;
    await leaving;
  } finally {
    setSystemTime();
    globalThis.fetch = shim;
  }
  expect(page.client.auth.session).toBeNull();
  expect(jar.size).toBe(0);
  // Ended on svc by the cookie the renewal left: neither it nor the one before it refreshes.
  expectProblem(await refreshBy(cookie), 401, "invalid_refresh_token");
  expect(await page.resume()).toBeNull();
  expect(await sessions()).toHaveLength(before);
});
