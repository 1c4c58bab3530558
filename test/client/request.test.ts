// The client's way to the routes it does not wrap (client.request), and its renewal while idle (keepAlive).
// svc answers in process; a cookie jar stands in for a browser's.
import { afterEach, expect, setSystemTime, test } from "bun:test";
import { createClient, isSvcError, memoryStorage } from "../../client/src/index.ts";
import { promote, testApp, testConfig } from "../helpers.ts";

const PASSWORD = "correct horse battery";

afterEach(() => setSystemTime());

/** svc in process, its access tokens `ttlSeconds` long; every request the client sent, as method and path. */
async function svc(ttlSeconds = 900) {
  const base = testConfig();
  const app = await testApp({ config: { jwt: { ...base.jwt, ttlSeconds } } });
  const sent: string[] = [];
  /** svc's session cookie, as a browser on svc's own origin keeps it. */
  let cookie: string | null = null;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    sent.push(`${request.method} ${url.pathname}${url.search}`);
    if (cookie !== null) request.headers.set("cookie", `svc_refresh=${cookie}`);
    if (request.method !== "GET") request.headers.set("origin", url.origin);
    const response = await app.app.handle(request);
    for (const line of response.headers.getSetCookie()) {
      const set = Bun.Cookie.parse(line);
      cookie = set.maxAge === 0 ? null : set.value;
    }
    return response;
  }) as typeof globalThis.fetch;
  return { ...app, sent, fetch };
}

test("request: an admin route with the session's token, its JSON, status and next page; a refusal as SvcError", async () => {
  const { fetch, sent, signUp, store } = await svc();
  const root = await signUp("root", PASSWORD);
  await promote(store, root.user.id);
  for (const name of ["ann", "bob"]) await signUp(name);
  const client = createClient({ baseUrl: "http://localhost", fetch });
  await client.auth.login({ username: "root", password: PASSWORD });

  const first = await client.request<Array<{ username: string }>>("GET", "/svc-api/v1/admin/users", {
    query: { limit: 2 },
  });
  expect(first.status).toBe(200);
  expect(first.body.map((user) => user.username)).toEqual(["root", "ann"]);
  expect(first.next).toStartWith("/svc-api/v1/admin/users?");
  const second = await client.request<Array<{ username: string }>>("GET", first.next!);
  expect(second.body.map((user) => user.username)).toEqual(["bob"]);
  expect(second.next).toBeNull();

  const made = await client.request<{ id: string }>("POST", "/svc-api/v1/admin/users", {
    body: { username: "cyd", email: "cyd@example.com", password: PASSWORD },
  });
  expect(made.status).toBe(201);
  const gone = await client.request("DELETE", `/svc-api/v1/admin/users/${made.body.id}`);
  expect(gone).toMatchObject({ status: 204, body: undefined, next: null });

  const refused = await client
    .request("POST", "/svc-api/v1/admin/users", { body: { username: "cyd" } })
    .catch((error: unknown) => error);
  expect(isSvcError(refused, "validation_failed")).toBe(true);
  expect(sent.filter((line) => line.startsWith("POST /svc-api/v1/auth/refresh"))).toEqual([]);
});

test("request: a token svc refuses is renewed once and the call sent again", async () => {
  const { fetch, sent, signUp, store } = await svc();
  const root = await signUp("root", PASSWORD);
  await promote(store, root.user.id);
  const storage = memoryStorage();
  const client = createClient({ baseUrl: "http://localhost", fetch, storage });
  await client.auth.login({ username: "root", password: PASSWORD });
  // Past the token's life, while the client's own record says it lives on: only svc knows better.
  setSystemTime(new Date(Date.now() + 901_000));
  const held = JSON.parse(String(storage.getItem("svc.session")));
  storage.setItem("svc.session", JSON.stringify({ ...held, issuedAt: Date.now(), expiresAt: Date.now() + 600_000 }));
  sent.length = 0;
  const answer = await client.request("GET", "/svc-api/v1/admin/users");
  expect(answer.status).toBe(200);
  expect(sent).toEqual(["GET /svc-api/v1/admin/users", "POST /svc-api/v1/auth/refresh", "GET /svc-api/v1/admin/users"]);
});

test("keepAlive: an idle client renews its token before it expires, and again, until it signs out", async () => {
  // Tokens of 1 s, renewed a fifth of their life (0.2 s) before they expire: awaited by the session's news.
  const { fetch, sent, signUp } = await svc(1);
  await signUp("ann", PASSWORD);
  const client = createClient({ baseUrl: "http://localhost", fetch, mode: "cookie", keepAlive: true });
  /** The session's next change: a renewal has landed. */
  const changed = () =>
    new Promise<Date | null>((resolve) => {
      const stop = client.auth.onChange((session) => {
        stop();
        resolve(session?.tokenExpiresAt ?? null);
      });
    });
  await client.auth.login({ username: "ann", password: PASSWORD });
  const first = client.auth.session!.tokenExpiresAt;
  sent.length = 0;
  const renewed = await changed();
  expect(sent).toEqual(["POST /svc-api/v1/auth/refresh"]);
  expect(renewed!.getTime()).toBeGreaterThan(first.getTime());
  await changed();
  expect(sent).toEqual(["POST /svc-api/v1/auth/refresh", "POST /svc-api/v1/auth/refresh"]);
  await client.auth.logout();
  expect(client.auth.session).toBeNull();
});
