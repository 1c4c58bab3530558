// Memory is handed back once per quiet spell after requests, never while they keep coming.
import { expect, test } from "bun:test";
import { quietSpellCheck } from "../src/process/idle-memory.ts";

test("releases once after a burst goes quiet, not while busy, not again until the next burst", () => {
  let requests = 0;
  let releases = 0;
  const check = quietSpellCheck(
    () => requests,
    () => releases++,
    { atMostEvery: 0 },
  );
  // Idle from the start, with nothing served: nothing to give back.
  check();
  check();
  expect(releases).toBe(0);
  // Busy: requests between every two checks.
  for (let i = 0; i < 5; i++) {
    requests += 3;
    check();
  }
  expect(releases).toBe(0);
  // Quiet: once, however long it stays quiet.
  for (let i = 0; i < 5; i++) check();
  expect(releases).toBe(1);
  // The next burst and its quiet: once more.
  requests++;
  check();
  check();
  check();
  expect(releases).toBe(2);
});

/** A check on a clock the test moves: `at` holds the requests it reads, the releases it made and the time. */
function onTestClock(options: { after?: number; atMostEvery: number }) {
  const at = { requests: 0, releases: 0, clock: 0 };
  const check = quietSpellCheck(
    () => at.requests,
    () => at.releases++,
    { ...options, now: () => at.clock },
  );
  return { at, check };
}

test("releases at most once per interval: a quiet spell that comes sooner waits for it", () => {
  const { at, check } = onTestClock({ atMostEvery: 5000 });
  const spell = () => {
    // A request, then a period without one.
    at.requests++;
    at.clock += 250;
    check();
    at.clock += 250;
    check();
  };
  spell();
  expect(at.releases).toBe(1);
  // A client polling every 500 ms: no more releases until 5 s have passed since the last one.
  for (let i = 0; i < 9; i++) spell();
  expect(at.clock).toBe(5000);
  expect(at.releases).toBe(1);
  spell();
  expect(at.releases).toBe(2);
  // A spell owed but too soon is made at the first check once the interval is over, with no new request.
  spell();
  expect(at.releases).toBe(2);
  at.clock += 4000;
  check();
  expect(at.releases).toBe(2);
  at.clock += 500;
  check();
  expect(at.releases).toBe(3);
  check();
  expect(at.releases).toBe(3);
});

test("a release with a wait comes only once the quiet has lasted that long, counted from the last request", () => {
  const { at, check } = onTestClock({ after: 30_000, atMostEvery: 5000 });
  const period = () => {
    at.clock += 250;
    check();
  };
  at.requests++;
  period();
  // A client polling every 20 s keeps the quiet from ever lasting 30 s.
  for (let poll = 0; poll < 5; poll++) {
    for (let i = 0; i < 80; i++) period();
    expect(at.releases).toBe(0);
    at.requests++;
    period();
  }
  // It stops: the release comes 30 s after the check that saw its last request, not before.
  for (let i = 0; i < 119; i++) period();
  expect(at.releases).toBe(0);
  period();
  expect(at.releases).toBe(1);
  // However long the quiet lasts after that, once.
  for (let i = 0; i < 400; i++) period();
  expect(at.releases).toBe(1);
});
