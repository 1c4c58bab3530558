// @svc/client's sessions in process (the app answers its fetch): one refresh however many calls need one,
// clients sharing a store never spend a refresh token twice, tab news, and the session's life cycle.
// test/e2e/client.test.ts proves the same against the compiled binary with real expiring tokens.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { createClient, memoryStorage, type SessionStorage, SvcError } from "../../client/src/index.ts";
import { testApp, testConfig } from "../helpers.ts";
import { signedIn } from "../support/signed-in.ts";

const PASSWORD = "correct horse battery";
const TTL_S = 60;

afterEach(() => setSystemTime());

/** svc in process, with `SVC_REFRESH_REUSE_WINDOW=0`: a refresh token spent twice ends its session. */
async function svc() {
  const base = testConfig();
  const { app, call } = await testApp({
    config: { jwt: { ...base.jwt, ttlSeconds: TTL_S }, sessions: { ...base.sessions, reuseWindowMs: 0 } },
  });
  const counts = { refresh: 0, unauthorized: 0 };
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).pathname === "/svc-api/v1/auth/refresh") counts.refresh++;
    const response = await app.handle(request);
    if (response.status === 401) counts.unauthorized++;
    return response;
  }) as typeof globalThis.fetch;
  const client = (storage?: SessionStorage) => createClient({ baseUrl: "http://localhost", fetch, storage });
  await client().users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  return { call, counts, client };
}

/** Moves the clock past the access token's life (svc's and the client's alike). */
function expireTokens(): void {
  setSystemTime(new Date(Date.now() + (TTL_S + 1) * 1000));
}

describe("renewal", () => {
  test("20 calls at once after the token expired make one refresh, and all succeed", async () => {
    const { counts, client } = await svc();
    const ann = client();
    await ann.auth.login({ username: "ann", password: PASSWORD });
    expireTokens();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? ann.users.me() : ann.categories.list())),
    );
    expect(answers).toHaveLength(20);
    expect(counts.refresh).toBe(1);
    expect(counts.unauthorized).toBe(0);
  });

  test("20 calls refused with 401 while the client thought its token fresh: one refresh, each sent again", async () => {
    const { counts, client } = await svc();
    const storage = memoryStorage();
    const ann = client(storage);
    await ann.auth.login({ username: "ann", password: PASSWORD });
    expireTokens();
    // The client's own record says the token lives on: only svc knows better.
    const held = JSON.parse(String(storage.getItem("svc.session")));
    storage.setItem("svc.session", JSON.stringify({ ...held, issuedAt: Date.now(), expiresAt: Date.now() + 600_000 }));
    const answers = await Promise.all(Array.from({ length: 20 }, () => ann.users.me()));
    expect(answers.map((me) => me.username)).toEqual(Array(20).fill("ann"));
    expect(counts.unauthorized).toBe(20);
    expect(counts.refresh).toBe(1);
  });

  test("two clients sharing a store renew once between them and keep one session", async () => {
    const { call, counts, client } = await svc();
    const storage = memoryStorage();
    const [first, second] = [client(storage), client(storage)];
    await first.auth.login({ username: "ann", password: PASSWORD });
    expect(second.auth.session?.user.username).toBe("ann");
    expireTokens();
    await Promise.all([
      ...Array.from({ length: 10 }, () => first.users.me()),
      ...Array.from({ length: 10 }, () => second.users.me()),
    ]);
    expect(counts.refresh).toBe(1);
    const token = await second.auth.token();
    const sessions = await call("GET", "/svc-api/v1/auth/sessions", { token: token ?? "" });
    expect(sessions.body).toHaveLength(1);
  });

  test("a store without change notices: the lock still reads it before renewing", async () => {
    const { counts, client } = await svc();
    const values = new Map<string, string>();
    // Web Storage's three methods and nothing else, as a store that cannot tell of changes.
    const plain: SessionStorage = {
      getItem: (key) => values.get(key) ?? null,
      setItem: (key, value) => void values.set(key, value),
      removeItem: (key) => void values.delete(key),
    };
    const [first, second] = [client(plain), client(plain)];
    await first.auth.login({ username: "ann", password: PASSWORD });
    await second.auth.ready;
    expireTokens();
    // Both due at once: whichever renews second must find the other's pair in the store, not spend its own.
    await Promise.all([first.users.me(), second.users.me()]);
    expect(counts.refresh).toBe(1);
    expect((await first.users.me()).username).toBe("ann");
  });
});

describe("life cycle", () => {
  test("onChange tells of login, renewal and logout; logout ends the session on svc", async () => {
    const { client } = await svc();
    const ann = client();
    const seen: Array<string | null> = [];
    const stop = ann.auth.onChange((session) => seen.push(session ? session.user.username : null));
    const session = signedIn(await ann.auth.login({ username: "ann", password: PASSWORD }));
    expect(session.mfaRequired).toBe(false);
    expect(session.user).toMatchObject({ username: "ann", email: "ann@example.com", role: "user" });
    expect(session.expiresAt.getTime()).toBeGreaterThan(session.tokenExpiresAt.getTime());
    await ann.auth.refresh();
    const token = await ann.auth.token();
    await ann.auth.logout();
    stop();
    expect(seen).toEqual(["ann", "ann", null]);
    expect(ann.auth.session).toBeNull();
    // The token is refused by svc, not only forgotten here.
    const other = client();
    const refused = await other.graphql("{ categories { id } }", undefined).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SvcError);
    expect(token).not.toBeNull();
  });

  test("a session spent elsewhere ends here: the failed call reports unauthorized and onChange says null", async () => {
    const { client } = await svc();
    const storage = memoryStorage();
    const ann = client(storage);
    await ann.auth.login({ username: "ann", password: PASSWORD });
    const held = JSON.parse(String(storage.getItem("svc.session")));
    await ann.auth.logout({ scope: "global" });
    // Put back the ended session, as a copy kept elsewhere would be.
    storage.setItem("svc.session", JSON.stringify(held));
    const ended = new Promise((resolve) => ann.auth.onChange((session) => session === null && resolve(null)));
    expireTokens();
    const error = await ann.users.me().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SvcError);
    expect((error as SvcError).code).toBe("unauthorized");
    await ended;
    expect(ann.auth.session).toBeNull();
  });

  test("changing the password keeps this session on its new pair; deleting the account ends it", async () => {
    const { counts, client } = await svc();
    const ann = client();
    await ann.auth.login({ username: "ann", password: PASSWORD });
    const before = await ann.auth.token();
    await ann.users.changePassword({ current_password: PASSWORD, new_password: "battery staple horse" });
    expect(await ann.auth.token()).not.toBe(before);
    expect((await ann.users.update({ username: "anne" })).username).toBe("anne");
    expect(ann.auth.session?.user.username).toBe("anne");
    // Mail is on: a new address waits for its link (202), and the session's user keeps the old one meanwhile.
    const pending = await ann.users.update({
      username: "annie",
      email: "ann@example.org",
      current_password: "battery staple horse",
    });
    expect(pending).toMatchObject({ username: "annie", email: "ann@example.com" });
    expect(ann.auth.session?.user).toMatchObject({ username: "annie", email: "ann@example.com" });
    await ann.users.delete();
    expect(ann.auth.session).toBeNull();
    expect(counts.refresh).toBe(0);
  });

  test("users.list walks every page by its Link header", async () => {
    const { client } = await svc();
    const ann = client();
    for (let i = 0; i < 6; i++) {
      await ann.users.create({ username: `user${i}`, email: `user${i}@example.com`, password: PASSWORD });
    }
    await ann.auth.login({ username: "ann", password: PASSWORD });
    const sizes: number[] = [];
    for await (const page of ann.users.list({ limit: 3 }).pages()) sizes.push(page.length);
    expect(sizes).toEqual([3, 3, 1]);
    const names = new Set<string>();
    for await (const user of ann.users.list({ limit: 2 })) names.add(user.username);
    expect(names.size).toBe(7);
  });
});
