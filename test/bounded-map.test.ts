import { expect, test } from "bun:test";
import { setBounded } from "../src/lib/bounded-map.ts";

test("a bounded map drops the oldest inserted entry, and a key set again counts as new", () => {
  const map = new Map<string, number>();
  setBounded(map, "a", 1, 2);
  setBounded(map, "b", 2, 2);
  setBounded(map, "a", 3, 2);
  expect([...map]).toEqual([
    ["b", 2],
    ["a", 3],
  ]);
  setBounded(map, "c", 4, 2);
  expect([...map]).toEqual([
    ["a", 3],
    ["c", 4],
  ]);
});
