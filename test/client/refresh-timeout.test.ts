// A refresh that never answers holds the lock every client and tab of the session waits on: it is bounded
// (`renewTimeoutMs`), fails as no answer, and leaves the session for the next try.
import { expect, test } from "bun:test";
import { createClient, memoryStorage } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { failure } from "../support/failure.ts";

test("a hung refresh fails with network_error after renewTimeoutMs and frees the lock", async () => {
  const { app } = await testApp();
  let hang = true;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (hang && new URL(request.url).pathname.endsWith("/auth/refresh")) {
      // Never answers: only the client's own signal ends the wait.
      return new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
      );
    }
    return app.handle(request);
  }) as typeof globalThis.fetch;
  const client = createClient({ baseUrl: "http://localhost", fetch, storage: memoryStorage(), renewTimeoutMs: 5 });
  await client.users.create({ username: "ann", email: "ann@example.com", password: "correct horse battery" });
  await client.auth.login({ username: "ann", password: "correct horse battery" });
  expect(await failure(client.auth.refresh())).toMatchObject({ code: "network_error" });
  expect(client.auth.session?.user.username).toBe("ann");
  hang = false;
  expect((await client.auth.refresh())?.user.username).toBe("ann");
});
