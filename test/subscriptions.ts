// Subscribing as clients do: graphql-sse's and graphql-ws's reference clients, collecting what
// arrives; every client is disposed of by `stopAll` (call it after each test).
import { createClient as createSseClient } from "graphql-sse";
import { createClient as createWsClient } from "graphql-ws";
import type { App } from "../src/app.ts";
import { type ConfigOverrides, testApp } from "./helpers.ts";
import { waitUntil } from "./support/wait.ts";

export const EVENTS = "subscription { categoryEvents { kind id category { name version } } }";

export type Event = {
  kind: string;
  id: string;
  cursor?: string;
  category: { name: string; version: number } | null;
};
export type Result = {
  data?: { categoryEvents: Event } | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
};

const stops: Array<() => unknown> = [];

/** Disposes of every client, server and app registered since the last call (afterEach). */
export async function stopAll(): Promise<void> {
  for (const stop of stops.splice(0).reverse()) await stop();
}

/** A listening svc on `svc`'s app, stopped by stopAll. */
export function listen<T extends { app: App }>(svc: T): T & { url: string } {
  const server = svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
  // Stopping the server drops its connections, which ends their streams; the app itself may serve on
  // (instances.test.ts shares its apps between tests).
  stops.push(() => server.stop(true));
  return { ...svc, url: `http://127.0.0.1:${server.port}/graphql` };
}

/** Waits until svc counts `n` open subscriptions (a subscription is live once counted). */
export async function opened(svc: { call: (method: string, path: string) => Promise<{ text: string }> }, n: number) {
  await waitUntil(
    async () => {
      const metrics = (await svc.call("GET", "/svc/metrics")).text;
      const open = [...metrics.matchAll(/^svc_subscriptions_open\{.*\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
      return open === n;
    },
    { what: `${n} open subscriptions` },
  );
}

/** What a subscription has received so far, and its end. */
export interface Received {
  results: Result[];
  ended: Promise<"complete" | unknown>;
  /** Resolves once `n` results have come (or rejects after `ms`). */
  count(n: number, ms?: number): Promise<Result[]>;
  stop(): void;
}

function collector(
  start: (sink: { next(r: Result): void; error(e: unknown): void; complete(): void }) => () => void,
): Received {
  const results: Result[] = [];
  let waiters: Array<() => void> = [];
  let finish!: (how: unknown) => void;
  const ended = new Promise<unknown>((resolve) => (finish = resolve));
  const stop = start({
    next(result) {
      results.push(result);
      for (const wake of waiters.splice(0)) wake();
    },
    error(error) {
      finish(error);
      for (const wake of waiters.splice(0)) wake();
    },
    complete() {
      finish("complete");
      for (const wake of waiters.splice(0)) wake();
    },
  });
  stops.push(stop);
  return {
    results,
    ended,
    stop,
    async count(n, ms = 3000) {
      // The monotonic clock: a test may stand the system clock still (setSystemTime).
      const deadline = performance.now() + ms;
      while (results.length < n) {
        if (performance.now() > deadline)
          throw new Error(
            `waited ${ms} ms for ${n} results, got ${results.length}: …${JSON.stringify(results.slice(-2))}`,
          );
        await Promise.race([new Promise<void>((wake) => waiters.push(wake)), Bun.sleep(50)]);
      }
      return results;
    },
  };
}

/** With cursors, resuming after `after` (null: live only). */
export const RESUMABLE =
  "subscription ($after: String) { categoryEvents(after: $after) { kind id cursor category { name version } } }";

export function sse(url: string, token: string | null, query = EVENTS, variables?: Record<string, unknown>): Received {
  const client = createSseClient({
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
  stops.push(() => client.dispose());
  return collector((sink) => client.subscribe({ query, variables }, sink as never));
}

export function ws(url: string, token: string | null, query = EVENTS, variables?: Record<string, unknown>): Received {
  const client = createWsClient({
    url: url.replace(/^http/, "ws"),
    connectionParams: token ? { Authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: false,
    // A closed socket reaches the subscription's sink (and so the test) too; the default prints it to the console.
    onNonLazyError: () => {},
  });
  stops.push(() => client.dispose());
  return collector((sink) => client.subscribe({ query, variables }, sink as never));
}

/** A subscription request by SSE as any HTTP client sends it: the raw answer, its stream unread. */
export function subscribeBySse(url: string, token: string | null, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      accept: "text/event-stream",
      "content-type": "application/json",
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query: EVENTS }),
    signal,
  });
}

/** A listening svc on a fresh app, stopped by stopAll. */
export const listening = async (config: ConfigOverrides = {}) => listen(await testApp({ config }));

/** Both transports, for describe.each. */
export const TRANSPORTS = [
  ["SSE", sse],
  ["WebSocket", ws],
] as const;
