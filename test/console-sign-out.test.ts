// The console's sign-out (src/console/page/api.ts) without a browser: the page's own module, run by Bun
// against a listening svc, with the two browser pieces it uses (sessionStorage, same-origin fetch) stood
// in for. The Chromium tests (console.test.ts) cover the page itself.
import { afterAll, expect, setSystemTime, test } from "bun:test";
import { expectProblem, promote, testApp } from "./helpers.ts";

const svc = await testApp();
const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
afterAll(() => server.stop(true));

const stored = new Map<string, string>();
Object.assign(globalThis, {
  sessionStorage: {
    getItem: (key: string) => stored.get(key) ?? null,
    setItem: (key: string, value: string) => void stored.set(key, value),
    removeItem: (key: string) => void stored.delete(key),
  },
});
const realFetch = globalThis.fetch;
// The page's requests are same-origin paths; here, that origin is the listening svc.
globalThis.fetch = ((input: string, init?: RequestInit) =>
  realFetch(new URL(input, `http://127.0.0.1:${server.port}`), init)) as typeof fetch;
afterAll(() => {
  globalThis.fetch = realFetch;
});

// A path the root tsconfig does not follow: the page is typed with the DOM's library, in its own project.
const PAGE_API = "../src/console/page/api.ts";
// any: the page's module, typed by its own project (src/console/page/tsconfig.json), not this one.
const page: any = await import(PAGE_API);

test("signing out after the access token expired still ends the session on the server", async () => {
  const root = await svc.signUp("root");
  await promote(svc.store, root.user.id);
  await page.signIn("root", root.password);
  const refresh = stored.get("svc-admin.refresh")!;
  expect(refresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // Idle past the access token's 15 minutes.
  setSystemTime(new Date(Date.now() + 901_000));
  try {
    await page.signOut();
    expect(stored.size).toBe(0);
    expectProblem(
      await svc.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: refresh } }),
      401,
      "invalid_refresh_token",
    );
  } finally {
    setSystemTime();
  }
  // Only the sign-up's session is left.
  expect((await svc.call("GET", "/svc-api/v1/auth/sessions", { token: root.token })).body).toHaveLength(1);
});

test("a user who is not an administrator is signed out at once, by the refresh token just issued", async () => {
  const ann = await svc.signUp("ann");
  await expect(page.signIn("ann", ann.password)).rejects.toThrow("Not an administrator");
  expect((await svc.call("GET", "/svc-api/v1/auth/sessions", { token: ann.token })).body).toHaveLength(1);
});
