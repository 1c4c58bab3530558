import { expect, test } from "bun:test";
import diagnostics from "node:diagnostics_channel";
import "../src/compat/tracing-channel.ts";

test("TracingChannel#hasSubscribers is a boolean that follows subscriptions, as in Node", () => {
  const channel = diagnostics.tracingChannel("svc:test-channel") as unknown as {
    hasSubscribers: unknown;
    subscribe(h: object): void;
    unsubscribe(h: object): void;
  };
  expect(channel.hasSubscribers).toBe(false);
  const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
  channel.subscribe(handlers);
  expect(channel.hasSubscribers).toBe(true);
  channel.unsubscribe(handlers);
  expect(channel.hasSubscribers).toBe(false);
});
