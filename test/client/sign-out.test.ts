// The session's end wins over a renewal on its way, however it ends: ended() (the account deleted) and a
// password change's new pair wait for the renewal, and nothing a renewal begun before the end brings back
// is kept. Ordered by a fetch the test holds, not by time.
import { expect, test } from "bun:test";
import { createClient, memoryStorage } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";

const PASSWORD = "correct horse battery";

/** A client whose refresh answers wait for `release()` once svc has given them. */
async function heldRefresh() {
  const { app } = await testApp();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let refreshing!: () => void;
  const refreshSent = new Promise<void>((resolve) => (refreshing = resolve));
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const answer = await app.handle(request);
    if (new URL(request.url).pathname.endsWith("/auth/refresh")) {
      refreshing();
      await held;
    }
    return answer;
  }) as typeof globalThis.fetch;
  const storage = memoryStorage();
  const client = createClient({ baseUrl: "http://localhost", fetch, storage });
  await client.users.create({ username: "ann", email: "ann@example.com", password: PASSWORD });
  await client.auth.login({ username: "ann", password: PASSWORD });
  return { client, storage, release, refreshSent };
}

test("a session ended while a renewal is on its way stays ended", async () => {
  const { client, storage, release, refreshSent } = await heldRefresh();
  const renewal = client.auth.refresh();
  await refreshSent;
  const ending = client.auth.ended();
  release();
  await renewal;
  await ending;
  expect(client.auth.session).toBeNull();
  expect(storage.getItem("svc.session")).toBeNull();
});

test("a password change's pair is kept after a renewal on its way, not overwritten by it", async () => {
  const { client, storage, release, refreshSent } = await heldRefresh();
  const renewal = client.auth.refresh();
  await refreshSent;
  const pair = {
    token: "from-the-password-change",
    token_type: "Bearer" as const,
    expires_in: 900,
    refresh_token: "r",
    refresh_expires_in: 3600,
  };
  const keeping = client.auth.renewed(pair);
  release();
  await renewal;
  await keeping;
  expect(await client.auth.token()).toBe("from-the-password-change");
  expect(JSON.parse(String(storage.getItem("svc.session"))).token).toBe("from-the-password-change");
});
