// categories.subscribe's connection state, and which failures it retries: svc in process, its subscription
// requests answered by the test where the test decides, the pauses counted by a `wait` the test holds.
import { expect, test } from "bun:test";
import type { SvcError } from "../../client/src/errors.ts";
import { follow, type FollowDeps, type SubscriptionState } from "../../client/src/subscription.ts";
import { subscriptionSession } from "../support/subscription-session.ts";

const following = subscriptionSession;

/** Follows until `enough` says so (asked at each state and each wait); answers the states, errors and waits. */
async function run(
  setup: Awaited<ReturnType<typeof following>>,
  enough: (seen: { states: SubscriptionState[]; waits: number[] }) => boolean,
  deps: Omit<FollowDeps, "wait"> = { pageOrigin: null },
) {
  const stopped = new AbortController();
  const seen = { states: [] as SubscriptionState[], errors: [] as SvcError[], waits: [] as number[] };
  const check = () => {
    if (enough(seen)) stopped.abort();
  };
  await follow(
    setup.http,
    setup.auth,
    () => {},
    {
      onState: (state) => {
        seen.states.push(state);
        check();
      },
      onError: (error) => seen.errors.push(error),
    },
    stopped.signal,
    {
      ...deps,
      wait: async (ms) => {
        seen.waits.push(ms);
        check();
      },
    },
  );
  return seen;
}

const statuses = (states: SubscriptionState[]) => states.map((state) => state.status);

test("connecting, open, then reconnecting with the reason and the next attempt's time; stop() closes", async () => {
  const ended = () => new Response("", { headers: { "content-type": "text/event-stream" } });
  const setup = await following(ended);
  const before = Date.now();
  const seen = await run(setup, ({ waits }) => waits.length === 2);
  expect(statuses(seen.states)).toEqual([
    "connecting",
    "open",
    "reconnecting",
    "connecting",
    "open",
    "reconnecting",
    "closed",
  ]);
  expect(seen.states[1]).toEqual({ status: "open", fresh: true });
  const reconnecting = seen.states[2] as Extract<SubscriptionState, { status: "reconnecting" }>;
  expect(reconnecting.reason).toMatchObject({ code: "network_error", title: "Stream ended" });
  expect(reconnecting.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before + 250);
  expect(reconnecting.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now() + 250);
  expect(seen.states.at(-1)).toEqual({ status: "closed", error: null });
  expect(seen.errors).toEqual([]);
});

test("SVC_SUBSCRIPTIONS_PER_USER: the one too many reaches onError with 429 too_many_subscriptions, not tried again", async () => {
  const setup = await following(undefined, { subscriptions: { perUser: 1, max: 100 } });
  const first = new AbortController();
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  const kept = follow(setup.http, setup.auth, () => {}, { onOpen: () => opened() }, first.signal, { pageOrigin: null });
  await open;
  const seen = await run(setup, () => false);
  expect(seen.errors).toHaveLength(1);
  expect(seen.errors[0]).toMatchObject({ status: 429, code: "too_many_subscriptions" });
  expect(statuses(seen.states)).toEqual(["connecting", "closed"]);
  expect(seen.states[1]).toEqual({ status: "closed", error: seen.errors[0]! });
  expect(seen.waits).toEqual([]);
  expect(setup.attempts()).toBe(2);
  first.abort();
  await kept;
});

test("a 429 of any kind stops too; a 503 and a proxy's 502 are waited out and tried again", async () => {
  const throttled = () =>
    Response.json(
      { type: "about:blank", title: "Too many requests", status: 429, detail: "slow down", code: "too_many_requests" },
      { status: 429, headers: { "content-type": "application/problem+json", "retry-after": "7" } },
    );
  const refused = await run(await following(throttled), () => false);
  expect(refused.errors.map((error) => [error.status, error.code, error.retryAfter])).toEqual([
    [429, "too_many_requests", 7],
  ]);

  let attempt = 0;
  const flaky = () =>
    ++attempt === 1
      ? Response.json(
          {
            errors: [{ message: "down", extensions: { code: "SERVICE_UNAVAILABLE", reason: "database_unavailable" } }],
          },
          { status: 503, headers: { "retry-after": "2" } },
        )
      : new Response("<html>Bad Gateway</html>", { status: 502, headers: { "content-type": "text/html" } });
  const retried = await run(await following(flaky), ({ waits }) => waits.length === 2);
  expect(retried.errors).toEqual([]);
  const reasons = retried.states.flatMap((state) => (state.status === "reconnecting" ? [state.reason] : []));
  expect(reasons.map((reason) => [reason.status, reason.code])).toEqual([
    [503, "database_unavailable"],
    [502, "unexpected_response"],
  ]);
  // The longer of Retry-After and the back-off.
  expect(retried.waits).toEqual([2000, 500]);
});

test("an expired token: reconnecting with TOKEN_EXPIRED, renewed, at once connecting again", async () => {
  const expired = () =>
    new Response(
      `event: next\ndata: ${JSON.stringify({ errors: [{ message: "expired", extensions: { code: "TOKEN_EXPIRED" } }] })}\n\n`,
      { headers: { "content-type": "text/event-stream" } },
    );
  const seen = await run(await following(expired), ({ waits }) => waits.length === 1);
  expect(statuses(seen.states).slice(0, 5)).toEqual(["connecting", "open", "reconnecting", "connecting", "open"]);
  const first = seen.states[2] as Extract<SubscriptionState, { status: "reconnecting" }>;
  expect(first.reason.graphqlCode).toBe("TOKEN_EXPIRED");
  expect(seen.errors).toEqual([]);
});

test("on a page of another origin, a request refused while svc answers a no-cors probe is CORS, in onError", async () => {
  const blocked = () => Promise.reject(new TypeError("Failed to fetch"));
  const setup = await following(blocked);
  const cors = await run(setup, () => false, { pageOrigin: "http://app.example", reachable: async () => true });
  expect(cors.errors).toHaveLength(1);
  expect(cors.errors[0]).toMatchObject({ status: 0, code: "network_error", title: "Refused by the browser (CORS)" });
  expect(cors.errors[0]!.detail).toContain("add http://app.example to svc's SVC_CORS_ORIGINS");
  // Six attempts in a row, with the back-off between them (about 8 s in a browser): a proxy's error page
  // without CORS headers while svc restarts behind it is not taken for CORS.
  expect(setup.attempts()).toBe(6);
  expect(cors.waits).toEqual([250, 500, 1000, 2000, 4000]);

  // svc not answering the probe either: the network, retried.
  const down = await run(await following(blocked), ({ waits }) => waits.length === 2, {
    pageOrigin: "http://app.example",
    reachable: async () => false,
  });
  expect(down.errors).toEqual([]);
  expect(down.waits).toEqual([250, 500]);
  // On svc's own origin there is no CORS: never probed.
  const same = await run(await following(blocked), ({ waits }) => waits.length === 1, {
    pageOrigin: "http://localhost",
    reachable: () => Promise.reject(new Error("probed")),
  });
  expect(same.errors).toEqual([]);
});
