// The sign-up limit's own rule, with a clock the test moves: SVC_SIGNUP_CLIENT_MAX attempts in a window
// that starts with a client's first, then 429 until that window ends; each client counted apart.
import { describe, expect, test } from "bun:test";
import { memoryThrottleStore } from "../src/auth/throttle-memory.ts";
import { AppError } from "../src/errors/index.ts";
import { createSignupThrottle } from "../src/signup/throttle.ts";

const HOUR = 3_600_000;

function throttle(clientMax = 3) {
  let now = Date.parse("2026-01-01T00:00:00.000Z");
  const store = memoryThrottleStore();
  return {
    store,
    /** 0 when counted, else the Retry-After (s) of the refusal. */
    async attempt(address = "192.0.2.1"): Promise<number> {
      try {
        await createSignupThrottle(store, { clientMax, clientWindowMs: HOUR }, () => now).attempt(address);
        return 0;
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== "too_many_requests") throw error;
        return Number(error.headers?.["retry-after"]);
      }
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("the sign-up limit", () => {
  test("clientMax attempts are counted; the next waits out the window begun by the first", async () => {
    const t = throttle();
    expect(await t.attempt()).toBe(0);
    t.advance(20 * 60_000);
    expect(await t.attempt()).toBe(0);
    expect(await t.attempt()).toBe(0);
    // Full: 40 minutes left of the window that began with the first attempt.
    expect(await t.attempt()).toBe(40 * 60);
    t.advance(39 * 60_000);
    expect(await t.attempt()).toBe(60);
    // A refusal counts nothing and moves nothing: once the window is over, a new one begins.
    t.advance(60_000);
    expect(await t.attempt()).toBe(0);
    expect(await t.store.get("signup:192.0.2.1")).toMatchObject({ failures: 1, blockedUntil: null });
  });

  test("a client signing up steadily below the rate is never refused", async () => {
    const t = throttle();
    for (let i = 0; i < 30; i++) {
      expect(await t.attempt()).toBe(0);
      t.advance(25 * 60_000);
    }
  });

  test("each address is counted apart, under a key of its own beside the login limits'", async () => {
    const t = throttle(1);
    expect(await t.attempt("192.0.2.1")).toBe(0);
    expect(await t.attempt("192.0.2.1")).toBe(3600);
    expect(await t.attempt("192.0.2.2")).toBe(0);
    expect(await t.store.get("client:192.0.2.1")).toBeNull();
  });
});
