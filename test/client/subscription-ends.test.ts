// How a subscription and a live list end, as an app that stops them from its own callbacks sees it: the
// closed state carries the error that ended it, nothing is handed on after stop(), and a live list stopped
// before its first read tells whoever awaits `ready`.
import { expect, test } from "bun:test";
import type { Auth } from "../../client/src/auth.ts";
import { Http } from "../../client/src/http.ts";
import { liveList } from "../../client/src/live-list.ts";
import { follow, type SubscriptionState } from "../../client/src/subscription.ts";

// Only what follow() asks of auth: a token, and a renewal that never comes into it here.
const auth = { token: async () => "t", renewAfter: async () => "t2" } as unknown as Auth;

function answering(answer: () => Response): Http {
  const fetch = (async () => answer()) as unknown as typeof globalThis.fetch;
  return new Http({ baseUrl: "http://svc.test", fetch, credentials: "same-origin" });
}

const tooMany = () =>
  new Response(
    JSON.stringify({
      errors: [
        { message: "too many", extensions: { code: "TOO_MANY_SUBSCRIPTIONS", reason: "too_many_subscriptions" } },
      ],
    }),
    { status: 429, headers: { "content-type": "application/json" } },
  );

test("an onError that stops the subscription: its closed state still carries the error", async () => {
  const states: SubscriptionState[] = [];
  const stopper = new AbortController();
  const options = { onState: (state: SubscriptionState) => states.push(state), onError: () => stopper.abort() };
  await follow(answering(tooMany), auth, () => {}, options, stopper.signal, { pageOrigin: null });
  expect(states.map((state) => state.status)).toEqual(["connecting", "closed"]);
  expect(states.at(-1)).toMatchObject({ status: "closed", error: { code: "too_many_subscriptions" } });
});

test("a refused live list ends closed with the refusal, and ready rejects with it", async () => {
  const http = answering(tooMany);
  const live = liveList({
    read: async () => [],
    subscribe: (listener, how) => {
      const stopper = new AbortController();
      void follow(http, auth, listener, how, stopper.signal, { pageOrigin: null });
      return () => stopper.abort();
    },
  });
  expect(
    await live.ready.then(
      () => null,
      (error: { code: string }) => error.code,
    ),
  ).toBe("too_many_subscriptions");
  expect(live.state).toMatchObject({ status: "closed", error: { code: "too_many_subscriptions" } });
});

test("stop() from the listener: the rest of the chunk already read is not handed on", async () => {
  const event = (n: number) =>
    `event: next\ndata: ${JSON.stringify({
      data: {
        categoryEvents: { kind: "CREATED", id: `c${n}`, cursor: `000000000000000${n}.ab`, category: { id: `c${n}` } },
      },
    })}\n\n`;
  const http = answering(
    () => new Response(event(1) + event(2) + event(3), { headers: { "content-type": "text/event-stream" } }),
  );
  const stopper = new AbortController();
  const heard: string[] = [];
  const listener = (got: { id: string }) => {
    heard.push(got.id);
    stopper.abort();
  };
  await follow(http, auth, listener, {}, stopper.signal, { pageOrigin: null });
  expect(heard).toEqual(["c1"]);
});

test("a live list stopped before its first read: ready rejects (Aborted), and the state is closed", async () => {
  const live = liveList({
    read: () => new Promise(() => {}),
    subscribe: (_listener, how) => {
      how.onOpen?.({ fresh: true });
      return () => {};
    },
  });
  live.stop();
  expect(
    await live.ready.then(
      () => null,
      (error: { title: string }) => error.title,
    ),
  ).toBe("Aborted");
  expect(live.state).toEqual({ status: "closed", error: null });
});
