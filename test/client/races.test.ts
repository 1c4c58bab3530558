// Races a review found in @svc/client's sessions: a sign-out while a renewal is on its way, and a cookie
// restore that met no network. Each ordered by a fetch the test holds, not by time.
import { describe, expect, test } from "bun:test";
import { Auth } from "../../client/src/auth.ts";
import { follow } from "../../client/src/subscription.ts";
import { Http } from "../../client/src/http.ts";
import { createClient, memoryStorage } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { failure } from "../support/failure.ts";

const PASSWORD = "correct horse battery";

test("a sign-out while a renewal is on its way ends the session, on svc too, and it does not come back", async () => {
  const { app, call } = await testApp();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let refreshing!: () => void;
  const refreshSent = new Promise<void>((resolve) => (refreshing = resolve));
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const answer = await app.handle(request);
    if (new URL(request.url).pathname.endsWith("/auth/refresh")) {
      refreshing();
      await held; // svc has renewed; its answer is still on the way
    }
    return answer;
  }) as typeof globalThis.fetch;
  const storage = memoryStorage();
  const client = createClient({ baseUrl: "http://localhost", fetch, storage });
  await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  await client.auth.login({ username: "ann", password: PASSWORD });
  const renewal = client.auth.refresh();
  await refreshSent;
  const signingOut = client.auth.logout();
  release();
  await renewal;
  await signingOut;
  expect(client.auth.session).toBeNull();
  expect(storage.getItem("svc.session")).toBeNull();
  // Signed out on svc as well: a fresh login's list of sessions holds only itself.
  const again = await call("POST", "/svc-api/v1/auth/login", { body: { username: "ann", password: PASSWORD } });
  const sessions = await call("GET", "/svc-api/v1/auth/sessions", { token: again.body.token });
  expect(sessions.body).toHaveLength(1);
});

test("cookie mode: a restore that met no network is tried again once the network is back", async () => {
  const { app } = await testApp();
  let offline = true;
  let refreshes = 0;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).pathname.endsWith("/auth/refresh")) refreshes++;
    if (offline) throw new TypeError("fetch failed");
    return app.handle(request);
  }) as typeof globalThis.fetch;
  const client = createClient({ baseUrl: "http://localhost", fetch, mode: "cookie" });
  expect(await failure(client.auth.token())).toMatchObject({ code: "network_error" });
  offline = false;
  // No cookie in this test: svc says so (400), and only that answer settles that there is no session.
  expect(await client.auth.token()).toBeNull();
  expect(refreshes).toBe(2);
  expect(await client.auth.token()).toBeNull();
  expect(refreshes).toBe(2);
});

describe("categories.subscribe", () => {
  /** A client whose subscription requests `answer` decides; the rest goes to svc in process. */
  async function following(answer: (attempt: number) => Response) {
    const { app } = await testApp();
    let attempts = 0;
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.headers.get("accept") === "text/event-stream") return answer(++attempts);
      return app.handle(request);
    }) as typeof globalThis.fetch;
    const http = new Http({ baseUrl: "http://localhost", fetch, credentials: "same-origin" });
    const auth = new Auth(http, { mode: "json", storage: memoryStorage(), storageKey: "svc.session" });
    const client = createClient({ baseUrl: "http://localhost", fetch });
    await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
    await auth.login({ username: "ann", password: PASSWORD });
    return { http, auth, attempts: () => attempts };
  }

  test("svc refusing fresh tokens too: one renewal at once, then each one after a pause", async () => {
    const refused = () =>
      Response.json({ errors: [{ message: "no", extensions: { code: "UNAUTHENTICATED" } }] }, { status: 401 });
    const { http, auth, attempts } = await following(refused);
    const stopped = new AbortController();
    const waits: Array<{ ms: number; before: number }> = [];
    const done = follow(http, auth, () => {}, {}, stopped.signal, {
      wait: async (ms) => {
        waits.push({ ms, before: attempts() + 1 });
        if (waits.length === 3) stopped.abort();
      },
    });
    await done;
    // Attempt 2 came at once after the first renewal; every later one only after a wait, growing.
    expect(waits.map((w) => w.before)).toEqual([3, 4, 5]);
    expect(waits.map((w) => w.ms)).toEqual([250, 500, 1000]);
  });

  test("onOpen says fresh while there is no cursor, on every stream that opens without one", async () => {
    const empty = () => new Response("", { headers: { "content-type": "text/event-stream" } });
    const { http, auth } = await following(empty);
    const opened: boolean[] = [];
    const stopped = new AbortController();
    await follow(http, auth, () => {}, { onOpen: ({ fresh }) => opened.push(fresh) }, stopped.signal, {
      wait: async () => {
        if (opened.length === 2) stopped.abort();
      },
    });
    expect(opened).toEqual([true, true]);
    const resumed: boolean[] = [];
    const again = new AbortController();
    await follow(
      http,
      auth,
      () => {},
      { after: "0000000000000001.x", onOpen: ({ fresh }) => resumed.push(fresh) },
      again.signal,
      { wait: async () => again.abort() },
    );
    expect(resumed).toEqual([false]);
  });
});

test("users.list follows no next page on another origin: the session's token stays with svc", async () => {
  const { app } = await testApp();
  const asked: string[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    asked.push(new URL(request.url).origin);
    const answer = await app.handle(request);
    if (!new URL(request.url).pathname.endsWith("/users/all")) return answer;
    const headers = new Headers(answer.headers);
    headers.set("link", '<//evil.example/steal>; rel="next"');
    return new Response(answer.body, { status: answer.status, headers });
  }) as typeof globalThis.fetch;
  const client = createClient({ baseUrl: "http://localhost", fetch });
  await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  await client.auth.login({ username: "ann", password: PASSWORD });
  const pages: unknown[] = [];
  const error = await (async () => {
    for await (const page of client.users.list().pages()) pages.push(page);
  })().catch((caught: unknown) => caught);
  expect(error).toMatchObject({ code: "unexpected_response" });
  expect(pages).toHaveLength(1);
  expect(new Set(asked)).toEqual(new Set(["http://localhost"]));
});
