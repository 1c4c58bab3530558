// The subscription's pauses: svc refusing fresh tokens, however it says so, and a Retry-After of 0, never make
// the client subscribe again at once in a loop. The pauses are counted by a `wait` the test holds, not timed.
import { expect, test } from "bun:test";
import { Auth } from "../../client/src/auth.ts";
import { follow } from "../../client/src/subscription.ts";
import { Http } from "../../client/src/http.ts";
import { createClient, memoryStorage } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";

const PASSWORD = "correct horse battery";

/** A signed-in session whose subscription requests `answer` decides; the rest goes to svc in process. */
async function following(answer: () => Response) {
  const { app } = await testApp();
  let attempts = 0;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.headers.get("accept") === "text/event-stream") {
      attempts++;
      return answer();
    }
    return app.handle(request);
  }) as typeof globalThis.fetch;
  const http = new Http({ baseUrl: "http://localhost", fetch, credentials: "same-origin" });
  const auth = new Auth(http, { mode: "json", storage: memoryStorage(), storageKey: "svc.session" });
  await createClient({ baseUrl: "http://localhost", fetch }).users.create({
    username: "ann",
    email: "ann@example.com",
    password: PASSWORD,
  });
  await auth.login({ username: "ann", password: PASSWORD });
  return { http, auth, attempts: () => attempts };
}

/** Follows until `count` waits were asked for; answers the waits' lengths and the attempt each came before. */
async function waitsOf(setup: Awaited<ReturnType<typeof following>>, count: number) {
  const stopped = new AbortController();
  const waits: Array<{ ms: number; before: number }> = [];
  await follow(setup.http, setup.auth, () => {}, {}, stopped.signal, {
    wait: async (ms) => {
      waits.push({ ms, before: setup.attempts() + 1 });
      if (waits.length === count) stopped.abort();
    },
  });
  return waits;
}

test("a stream that opens and then refuses the fresh token: one renewal at once, the next after a pause", async () => {
  const refusedInStream = () =>
    new Response(
      `event: next\ndata: ${JSON.stringify({ errors: [{ message: "no", extensions: { code: "UNAUTHENTICATED" } }] })}\n\n`,
      { headers: { "content-type": "text/event-stream" } },
    );
  const setup = await following(refusedInStream);
  const waits = await waitsOf(setup, 3);
  expect(waits.map((w) => w.before)).toEqual([3, 4, 5]);
  expect(waits.map((w) => w.ms)).toEqual([250, 500, 1000]);
});

test("Retry-After: 0 still pauses with the back-off", async () => {
  const busy = () =>
    Response.json(
      { errors: [{ message: "busy", extensions: { code: "SERVICE_UNAVAILABLE" } }] },
      { status: 503, headers: { "retry-after": "0" } },
    );
  const setup = await following(busy);
  const waits = await waitsOf(setup, 3);
  expect(waits.map((w) => w.ms)).toEqual([250, 500, 1000]);
});
