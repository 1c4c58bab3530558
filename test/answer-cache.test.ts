// The kept GraphQL answers on their own: what they are keyed on, when they are given out, what is kept.
import { describe, expect, test } from "bun:test";
import { AnswerCache, type VersionedAnswer } from "../src/cache/answers.ts";
import { answerKey } from "../src/graphql/requests.ts";

const headers = (accept: string, contentType = "application/json") =>
  new Headers({ accept, "content-type": contentType });
const answer = (body: string, users = 1, categories = 1): VersionedAnswer => ({
  body,
  contentType: "application/json",
  operation: "anonymous",
  versions: { users, categories },
});

describe("kept answers", () => {
  test("keys hold the caller, Accept, Content-Type and the body", () => {
    const body = '{"query":"{ categories { id } }"}';
    const keys = new Set([
      answerKey("ann", headers("application/json"), body),
      answerKey("bob", headers("application/json"), body),
      answerKey(null, headers("application/json"), body),
      answerKey("ann", headers("application/graphql-response+json"), body),
      answerKey("ann", headers("application/json", "text/plain"), body),
      answerKey("ann", headers("application/json"), '{"query":"{ categories { name } }"}'),
    ]);
    expect(keys.size).toBe(6);
  });

  test("no key for a body naming a mutation, or one past 16 KiB", () => {
    expect(answerKey("ann", headers("*/*"), '{"query":"mutation { deleteCategory(id: \\"x\\") }"}')).toBeNull();
    expect(answerKey("ann", headers("*/*"), `{"query":"{ categories { ${"id ".repeat(6000)} } }"}`)).toBeNull();
  });

  test("answers only while both table versions are exactly those the answer was read at", () => {
    const cache = new AnswerCache(1_000_000, 1000);
    cache.set("k", answer("A", 3, 7));
    expect(cache.get("k", { users: 3, categories: 7 })?.body).toBe("A");
    expect(cache.get("k", { users: 4, categories: 7 })).toBeUndefined();
    // A stale entry is dropped, not kept for an older version to find.
    expect(cache.get("k", { users: 3, categories: 7 })).toBeUndefined();
    cache.set("k", answer("B", 3, 7));
    expect(cache.get("k", { users: 3, categories: 8 })).toBeUndefined();
  });

  test("stays within its budget, dropping the oldest answers first, and keeps no answer over a quarter of it", () => {
    const cache = new AnswerCache(400, 1000);
    for (const key of ["a", "b", "c", "d"]) cache.set(key, answer(key.repeat(99)));
    const versions = { users: 1, categories: 1 };
    expect(["a", "b", "c", "d"].map((k) => cache.get(k, versions) !== undefined)).toEqual([true, true, true, true]);
    cache.set("e", answer("e".repeat(99)));
    expect(["a", "b", "c", "d", "e"].map((k) => cache.get(k, versions) !== undefined)).toEqual([
      false,
      true,
      true,
      true,
      true,
    ]);
    cache.set("big", answer("x".repeat(100)));
    expect(cache.get("big", versions)).toBeUndefined();
  });

  test("keeps at most its number of entries, however small they are", () => {
    const cache = new AnswerCache(1_000_000, 3);
    for (const key of ["a", "b", "c", "d"]) cache.set(key, answer(key));
    const versions = { users: 1, categories: 1 };
    expect(cache.size).toBe(3);
    expect(["a", "b", "c", "d"].map((k) => cache.get(k, versions) !== undefined)).toEqual([false, true, true, true]);
  });
});
