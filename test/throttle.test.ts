// The login throttle's own rule, with a clock the test moves: attempts are counted when reserved,
// before any password is checked, so no more than the limit are ever reserved between two successes;
// one refused while the account's attempts are in flight waits for them, within bounds.
import { describe, expect, test } from "bun:test";
import { memoryThrottleStore } from "../src/auth/throttle-memory.ts";
import type { WaitLimits } from "../src/auth/attempts-in-flight.ts";
import { createLoginThrottle, type Reservation } from "../src/auth/throttle.ts";
import { AppError } from "../src/errors/index.ts";

const settings = {
  maxFailures: 5,
  backoffBaseMs: 1000,
  backoffMaxMs: 8000,
  clientMaxFailures: 100,
  clientWindowMs: 60_000,
};

function throttle(waitLimits?: WaitLimits) {
  let now = Date.parse("2026-01-01T00:00:00.000Z");
  const store = memoryThrottleStore();
  return {
    throttle: createLoginThrottle(store, settings, () => now, waitLimits),
    store,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** The wait a refusal names (s), or 0 when the attempt was reserved (and then finished, as a failure). */
async function attempt(reserve: () => Promise<Reservation>): Promise<number> {
  try {
    using _ = await reserve();
    return 0;
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "too_many_requests") throw error;
    return Number(error.headers?.["retry-after"]);
  }
}

/** Whether a promise has settled once every job queued now has run (the memory store never waits on a timer). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("the login throttle", () => {
  test("reserves at most the limit at once; the rest wait for them, and are refused once they all fail", async () => {
    const { throttle: t, store } = throttle();
    const first = await Promise.all(Array.from({ length: 5 }, () => t.reserve("user:a", "client:x")));
    const rest = Array.from({ length: 7 }, () => attempt(() => t.reserve("user:a", "client:x")));
    expect(await settled(Promise.race(rest))).toBe(false);
    for (const reservation of first) reservation[Symbol.dispose]();
    expect(await Promise.all(rest)).toEqual(Array(7).fill(1));
    expect((await store.get("user:a"))?.failures).toBe(5);
  });

  test("a success among the attempts in flight lets the waiting ones in", async () => {
    const { throttle: t, store } = throttle();
    const first = await Promise.all(Array.from({ length: 5 }, () => t.reserve("user:a", "client:x")));
    const waiting = Array.from({ length: 3 }, () => t.reserve("user:a", "client:x"));
    expect(await settled(Promise.race(waiting))).toBe(false);
    await first[0]!.succeeded();
    const admitted = await Promise.all(waiting);
    expect((await store.get("user:a"))?.failures).toBe(3);
    for (const reservation of [...first, ...admitted]) reservation[Symbol.dispose]();
  });

  test("the wait is bounded: an attempt still blocked when it ends is refused", async () => {
    const { throttle: t } = throttle({ ms: 20, perAccount: 32, total: 1024 });
    const first = await Promise.all(Array.from({ length: 5 }, () => t.reserve("user:a", "client:x")));
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(1);
    for (const reservation of first) reservation[Symbol.dispose]();
  });

  test("the queue is bounded: past it, an attempt is refused at once", async () => {
    const { throttle: t } = throttle({ ms: 60_000, perAccount: 2, total: 1024 });
    const first = await Promise.all(Array.from({ length: 5 }, () => t.reserve("user:a", "client:x")));
    const queued = [attempt(() => t.reserve("user:a", "client:x")), attempt(() => t.reserve("user:a", "client:x"))];
    const third = attempt(() => t.reserve("user:a", "client:x"));
    expect(await settled(third)).toBe(true);
    expect(await third).toBe(1);
    expect(await settled(Promise.race(queued))).toBe(false);
    for (const reservation of first) reservation[Symbol.dispose]();
    expect(await Promise.all(queued)).toEqual([1, 1]);
  });

  test("nothing waits when no attempt of the account is in flight here: a block of finished failures stands", async () => {
    const { throttle: t } = throttle({ ms: 60_000, perAccount: 32, total: 1024 });
    for (let i = 0; i < 5; i++) expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(0);
    const refused = attempt(() => t.reserve("user:a", "client:x"));
    expect(await settled(refused)).toBe(true);
    expect(await refused).toBe(1);
  });

  test("a success ends the run: the next attempts are counted from nothing", async () => {
    const { throttle: t, store } = throttle();
    for (let i = 0; i < 4; i++) await attempt(() => t.reserve("user:a", "client:x"));
    using last = await t.reserve("user:a", "client:x");
    await last.succeeded();
    expect(await store.get("user:a")).toBeNull();
    for (let i = 0; i < 5; i++) expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(0);
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(1);
  });

  test("blocks double with each failure past the limit, up to the maximum", async () => {
    const { throttle: t, advance } = throttle();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) await attempt(() => t.reserve("user:a", "client:x"));
    for (let round = 0; round < 5; round++) {
      waits.push(await attempt(() => t.reserve("user:a", "client:x")));
      advance(waits.at(-1)! * 1000);
      await attempt(() => t.reserve("user:a", "client:x"));
    }
    expect(waits).toEqual([1, 2, 4, 8, 8]);
  });

  test("a released attempt is given back: the failures before it stay, and the block it set is lifted", async () => {
    const { throttle: t, store, advance } = throttle();
    for (let i = 0; i < 4; i++) await attempt(() => t.reserve("user:a", "client:x"));
    // The fifth reaches the limit and sets a block; released, it leaves the four failures and no block.
    using fifth = await t.reserve("user:a", "client:x");
    await fifth.released();
    expect(await store.get("user:a")).toMatchObject({ failures: 4, blockedUntil: null });
    expect((await store.get("client:x"))?.failures).toBe(4);
    // A failure now blocks the account as the fifth would have.
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(0);
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(1);
    // Past the block, an attempt released again lifts its own (doubled) block, and the count stays at 5.
    advance(1000);
    using after = await t.reserve("user:a", "client:x");
    await after.released();
    expect(await store.get("user:a")).toMatchObject({ failures: 5, blockedUntil: null });
    // The next failure is the sixth: blocked for twice the first block.
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(0);
    expect(await attempt(() => t.reserve("user:a", "client:x"))).toBe(2);
  });

  test("a client's success gives its own attempt back and leaves its failures counted", async () => {
    const { throttle: t, store } = throttle();
    for (let i = 0; i < 3; i++) await attempt(() => t.reserve(`user:${i}`, "client:x"));
    using ok = await t.reserve("user:ok", "client:x");
    await ok.succeeded();
    expect((await store.get("client:x"))?.failures).toBe(3);
  });

  test("an attempt between the account's reservation and the client's is in flight: a right password waits for it", async () => {
    // On PostgreSQL the two reservations are two round trips. An attempt arriving between them saw the
    // account full and nothing in flight here, and was refused at once: correct passwords got 429 in a burst.
    const memory = memoryThrottleStore();
    let release = () => {};
    const clientGate = new Promise<void>((resolve) => (release = resolve));
    const gated = {
      ...memory,
      async transition(key: string, step: Parameters<typeof memory.transition>[1]) {
        if (key === "client:x") await clientGate;
        return memory.transition(key, step);
      },
    } as typeof memory;
    const t = createLoginThrottle(gated, settings, () => Date.parse("2026-01-01T00:00:00.000Z"));
    const first = Array.from({ length: 5 }, () => t.reserve("user:a", "client:x"));
    // Every one of the five has its account reservation, none its client's yet.
    while ((await memory.get("user:a"))?.failures !== 5) await new Promise((resolve) => setImmediate(resolve));
    const right = t.reserve("user:a", "client:y");
    expect(await settled(right)).toBe(false);
    release();
    const reserved = await Promise.all(first);
    await reserved[0]!.succeeded();
    for (const reservation of reserved) reservation[Symbol.dispose]();
    using ok = await right;
    await ok.succeeded();
  });
});
