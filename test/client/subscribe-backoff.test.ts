// The subscription's pauses: svc refusing fresh tokens, however it says so, and a Retry-After of 0, never make
// the client subscribe again at once in a loop. The pauses are counted by a `wait` the test holds, not timed.
import { expect, test } from "bun:test";
import { follow } from "../../client/src/subscription.ts";
import { subscriptionSession } from "../support/subscription-session.ts";

/** A signed-in session whose subscription requests `answer` decides; the rest goes to svc in process. */
const following = subscriptionSession;

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
