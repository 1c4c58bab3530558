// client.health(): svc's health without a session, its 503 an answer rather than a failure, and anything that is
// not svc's health an SvcError. svc answers in process; a proxy's pages are stood in by a fetch of the test's.
import { expect, test } from "bun:test";
import { createClient, SvcError } from "../../client/src/index.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp } from "../helpers.ts";
import { failureOf } from "../support/failure.ts";

const PASSWORD = "correct horse battery";

/** A client of `app`, and the Authorization header of each request it sent. */
function clientOf(app: Awaited<ReturnType<typeof testApp>>) {
  const authorization: Array<string | null> = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    authorization.push(request.headers.get("authorization"));
    return app.app.handle(request);
  }) as typeof globalThis.fetch;
  return { client: createClient({ baseUrl: "http://svc.test", fetch }), authorization };
}

/** A client whose every request is answered by `answer`, as by a proxy in front of svc. */
const behindProxy = (answer: () => Response) =>
  createClient({ baseUrl: "http://svc.test", fetch: (async () => answer()) as unknown as typeof globalThis.fetch });

test("answers svc's health, with no session and sending none while signed in", async () => {
  const app = await testApp();
  await app.signUp("ann", PASSWORD);
  const { client, authorization } = clientOf(app);
  expect(await client.health()).toMatchObject({ service: "svc", status: "ok", checks: { database: "ok" } });
  await client.auth.login({ username: "ann", password: PASSWORD });
  expect((await client.health()).status).toBe("ok");
  expect(authorization.at(-1)).toBeNull();
  expect(authorization.filter((header) => header !== null)).toEqual([]);
});

test("a 503 while the database does not answer is svc's health, not a failure", async () => {
  const down = (store: VersionedStore): VersionedStore => ({
    ...store,
    ping: () => Promise.reject(new Error("database is gone")),
  });
  const { client } = clientOf(await testApp({ store: down }));
  expect(await client.health()).toMatchObject({ status: "unavailable", checks: { database: "unavailable" } });
});

test("anything that is not svc's health throws unexpected_response, with its status", async () => {
  const answers: Array<[number, string, string]> = [
    [502, "text/html", "<html><h1>502 Bad Gateway</h1></html>"],
    [503, "text/html", "<html>maintenance</html>"],
    [502, "application/json", '{"message":"no upstream"}'],
    [200, "application/json", '{"ok":true}'],
    [200, "text/html", "<html>a captive portal</html>"],
  ];
  for (const [status, type, body] of answers) {
    const client = behindProxy(() => new Response(body, { status, headers: { "content-type": type } }));
    const error = await failureOf(client.health(), SvcError);
    expect([error.code, error.status]).toEqual(["unexpected_response", status]);
  }
});

test("a proxy's 503 keeps its Retry-After and its text, as any failure does", async () => {
  const client = behindProxy(
    () =>
      new Response("<html>down for maintenance</html>", {
        status: 503,
        headers: { "content-type": "text/html", "retry-after": "120" },
      }),
  );
  const error = await failureOf(client.health(), SvcError);
  expect([error.code, error.status, error.retryAfter]).toEqual(["unexpected_response", 503, 120]);
  expect(error.detail).toContain("down for maintenance");
});

test("no answer at all throws network_error", async () => {
  const client = createClient({
    baseUrl: "http://svc.test",
    fetch: (async () => {
      throw new TypeError("fetch failed");
    }) as unknown as typeof globalThis.fetch,
  });
  expect((await failureOf(client.health(), SvcError)).code).toBe("network_error");
});
