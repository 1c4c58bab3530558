// Memory is handed back once per quiet spell after requests, never while they keep coming.
import { expect, test } from "bun:test";
import { quietSpellCheck } from "../src/idle-memory.ts";

test("releases once after a burst goes quiet, not while busy, not again until the next burst", () => {
  let requests = 0;
  let releases = 0;
  const check = quietSpellCheck(
    () => requests,
    () => releases++,
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
