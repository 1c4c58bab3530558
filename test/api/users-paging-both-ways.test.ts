// GET users/all paged both ways: after and before an id, the Link header's next, prev and first, the
// total in X-Total-Count with ?count=true, their ETags, and the refusals with their exact codes. On SQLite
// and (test:postgres) on PostgreSQL.
import { beforeAll, describe, expect, test } from "bun:test";
import { expectProblem, testApp, type Reply } from "../helpers.ts";

const ALL = "/svc-api/v1/users/all";

type App = Awaited<ReturnType<typeof testApp>>;

/** The Link header as { rel: url }. */
function links(reply: Reply): Record<string, string> {
  const found: Record<string, string> = {};
  for (const part of reply.headers.get("link")?.split(", ") ?? []) {
    const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(part)!;
    found[rel!] = url!;
  }
  return found;
}

const names = (reply: Reply) => reply.body.map((u: { username: string }) => u.username);

describe("users/all both ways", () => {
  let app: App;
  let token: string;
  let ids: string[];

  beforeAll(async () => {
    app = await testApp();
    const people = [];
    for (let i = 0; i < 5; i++) people.push(await app.signUp(`user${i}`));
    token = people[0]!.token;
    ids = people.map((p) => p.user.id);
  });

  const get = (path: string) => app.call("GET", path, { token });

  test("the first page links to the next alone; a middle page to next, prev and first", async () => {
    const first = await get(`${ALL}?limit=2`);
    expect(names(first)).toEqual(["user0", "user1"]);
    expect(links(first)).toEqual({ next: `${ALL}?limit=2&after=${ids[1]}` });
    const middle = await get(links(first).next!);
    expect(names(middle)).toEqual(["user2", "user3"]);
    expect(links(middle)).toEqual({
      next: `${ALL}?limit=2&after=${ids[3]}`,
      prev: `${ALL}?limit=2&before=${ids[2]}`,
      first: `${ALL}?limit=2`,
    });
    const last = await get(links(middle).next!);
    expect(names(last)).toEqual(["user4"]);
    expect(links(last)).toEqual({ prev: `${ALL}?limit=2&before=${ids[4]}`, first: `${ALL}?limit=2` });
  });

  test("walking prev from the last page gives every user back, each page oldest first", async () => {
    const seen: string[][] = [];
    let path: string | undefined = `${ALL}?limit=2&before=${ids[4]}`;
    while (path) {
      const reply = await get(path);
      expect(reply.status).toBe(200);
      seen.push(names(reply));
      path = links(reply).prev;
    }
    expect(seen).toEqual([
      ["user2", "user3"],
      ["user0", "user1"],
    ]);
  });

  test("a page before an id links to the next page after it, and to the first", async () => {
    const reply = await get(`${ALL}?limit=2&before=${ids[3]}`);
    expect(names(reply)).toEqual(["user1", "user2"]);
    expect(links(reply)).toEqual({
      next: `${ALL}?limit=2&after=${ids[2]}`,
      prev: `${ALL}?limit=2&before=${ids[1]}`,
      first: `${ALL}?limit=2`,
    });
    const start = await get(`${ALL}?limit=3&before=${ids[2]}`);
    expect(names(start)).toEqual(["user0", "user1"]);
    expect(links(start)).toEqual({ next: `${ALL}?limit=3&after=${ids[1]}`, first: `${ALL}?limit=3` });
  });

  test("an empty page (past either end) links to the first page only", async () => {
    for (const path of [`${ALL}?limit=2&after=${ids[4]}`, `${ALL}?limit=2&before=${ids[0]}`]) {
      const reply = await get(path);
      expect({ path, body: reply.body, links: links(reply) }).toEqual({
        path,
        body: [],
        links: { first: `${ALL}?limit=2` },
      });
    }
  });

  test("an id no user has still places the page: before and after are positions, not rows", async () => {
    const between = ids[2]!.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    const reply = await get(`${ALL}?limit=10&before=${between}`);
    expect(reply.status).toBe(200);
    expect(names(reply).length).toBeGreaterThanOrEqual(2);
  });

  test("count=true adds X-Total-Count, on every page, and the links keep asking for it", async () => {
    const first = await get(`${ALL}?limit=2&count=true`);
    expect(first.headers.get("x-total-count")).toBe("5");
    expect(links(first).next).toBe(`${ALL}?limit=2&after=${ids[1]}&count=true`);
    const next = await get(links(first).next!);
    expect(next.headers.get("x-total-count")).toBe("5");
    expect(links(next).prev).toBe(`${ALL}?limit=2&before=${ids[2]}&count=true`);
    expect(links(next).first).toBe(`${ALL}?limit=2&count=true`);
    for (const path of [`${ALL}?limit=2`, `${ALL}?limit=2&count=false`])
      expect((await get(path)).headers.get("x-total-count")).toBeNull();
  });
});

describe("users/all both ways: ETags", () => {
  test("a before page answers 304 while unchanged, and a new user elsewhere changes the total's tag", async () => {
    const app = await testApp();
    const ann = await app.signUp("ann");
    const bob = await app.signUp("bob");
    const page = `${ALL}?limit=1&before=${bob.user.id}`;
    const first = await app.call("GET", page, { token: ann.token });
    const tag = first.headers.get("etag")!;
    expect((await app.call("GET", page, { token: ann.token, headers: { "if-none-match": tag } })).status).toBe(304);

    const counted = `${ALL}?limit=1&count=true`;
    const before = await app.call("GET", counted, { token: ann.token });
    expect(before.headers.get("etag")).not.toBe(
      (await app.call("GET", `${ALL}?limit=1`, { token: ann.token })).headers.get("etag"),
    );
    const again = await app.call("GET", counted, {
      token: ann.token,
      headers: { "if-none-match": before.headers.get("etag")! },
    });
    expect({ status: again.status, total: again.headers.get("x-total-count") }).toEqual({ status: 304, total: "2" });
    // cid joins after the page: its body is the same, its total is not, so neither is its tag.
    await app.signUp("cid");
    const changed = await app.call("GET", counted, {
      token: ann.token,
      headers: { "if-none-match": before.headers.get("etag")! },
    });
    expect({ status: changed.status, total: changed.headers.get("x-total-count") }).toEqual({
      status: 200,
      total: "3",
    });
    expect(changed.text).toBe(before.text);
  });
});

describe("users/all both ways: refusals", () => {
  test.each([
    ["after and before together", "after={a}&before={b}", [{ field: "before" }]],
    ["a before that is no id", "before=not-an-id", [{ field: "before", message: "must be a user id" }]],
    ["count neither true nor false", "count=yes", [{ field: "count", message: "must be true or false" }]],
    ["count empty", "count=", [{ field: "count" }]],
    ["a bad limit with before", "limit=0&before={b}", [{ field: "limit" }]],
  ])("%s: 400 validation_failed naming it", async (_, query, errors) => {
    const { call, signUp } = await testApp();
    const ann = await signUp("ann");
    const bob = await signUp("bob");
    const path = `${ALL}?${query.replace("{a}", ann.user.id).replace("{b}", bob.user.id)}`;
    const reply = await call("GET", path, { token: ann.token });
    expectProblem(reply, 400, "validation_failed");
    expect(reply.body.errors).toMatchObject(errors);
  });
});
