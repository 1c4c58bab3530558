// The login throttle's own rule, with a clock the test moves: attempts are counted when reserved,
// before any password is checked, so no more than the limit are ever reserved between two successes.
import { describe, expect, test } from "bun:test";
import { memoryThrottleStore } from "../src/auth/throttle-memory.ts";
import { createLoginThrottle } from "../src/auth/throttle.ts";
import { AppError } from "../src/errors.ts";

const settings = {
  maxFailures: 5,
  backoffBaseMs: 1000,
  backoffMaxMs: 8000,
  clientMaxFailures: 100,
  clientWindowMs: 60_000,
};

function throttle() {
  let now = Date.parse("2026-01-01T00:00:00.000Z");
  const store = memoryThrottleStore();
  return {
    throttle: createLoginThrottle(store, settings, () => now),
    store,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** The wait a refusal names (s), or 0 when the attempt was reserved. */
async function attempt(reserve: () => Promise<void>): Promise<number> {
  try {
    await reserve();
    return 0;
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "too_many_requests") throw error;
    return Number(error.headers?.["retry-after"]);
  }
}

describe("the login throttle", () => {
  test("reserves at most the limit at once; the rest are refused until the block ends", async () => {
    const { throttle: t } = throttle();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => attempt(() => t.reserve("user:a", "client:x"))),
    );
    expect(outcomes.filter((wait) => wait === 0)).toHaveLength(5);
    expect(outcomes.filter((wait) => wait === 1)).toHaveLength(7);
  });

  test("a success ends the run: the next attempts are counted from nothing", async () => {
    const { throttle: t, store } = throttle();
    for (let i = 0; i < 4; i++) await t.reserve("user:a", "client:x");
    await t.reserve("user:a", "client:x");
    await t.succeeded("user:a", "client:x");
    expect(await store.get("user:a")).toBeNull();
    for (let i = 0; i < 5; i++) expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(0);
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(1);
  });

  test("blocks double with each failure past the limit, up to the maximum", async () => {
    const { throttle: t, advance } = throttle();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) await t.reserve("user:a", "client:x");
    for (let round = 0; round < 5; round++) {
      waits.push(await attempt(() => t.reserve("user:a", "client:x")));
      advance(waits.at(-1)! * 1000);
      await t.reserve("user:a", "client:x");
    }
    expect(waits).toEqual([1, 2, 4, 8, 8]);
  });

  test("a client's success gives its own attempt back and leaves its failures counted", async () => {
    const { throttle: t, store } = throttle();
    for (let i = 0; i < 3; i++) await t.reserve(`user:${i}`, "client:x");
    await t.reserve("user:ok", "client:x");
    await t.succeeded("user:ok", "client:x");
    expect((await store.get("client:x"))?.failures).toBe(3);
  });
});
