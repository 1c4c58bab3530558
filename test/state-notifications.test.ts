// What PostgreSQL announces on svc_state, by which every instance keeps token standings in memory
// (src/db/postgres/kept-reads.ts): a session ended or shortened, never one renewed. A transaction that
// notifies commits one at a time (PostgreSQL holds its notification queue's lock until the commit is
// flushed), so a refresh that announced its renewal capped every instance's refreshes (bench/results.md).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import type { VersionedStore } from "../src/db/store.ts";
import { testApp } from "./helpers.ts";
import { createTestDatabase, postgresAvailable, postgresConfig, type TestDatabase } from "./postgres.ts";
import { claims } from "./support/sessions.ts";
import { waitUntil } from "./support/wait.ts";

const available = await postgresAvailable();

describe.skipIf(!available)("svc_state on PostgreSQL", () => {
  let database: TestDatabase;
  let store: VersionedStore;
  let svc: Awaited<ReturnType<typeof testApp>>;
  let listener: SQL;
  const heard: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase("state_notifications");
    store = await openPostgresStore(postgresConfig(database.url));
    svc = await testApp({ on: store });
    listener = new SQL({ url: database.url, max: 1 });
    await listener.listen("svc_state", (payload: string) => heard.push(payload));
  });
  afterAll(async () => {
    await listener?.close();
    await store?.close();
    await database?.drop();
  });

  /** The session notices heard so far, once `count` of them have come. */
  const sessionNotices = async (count: number) => {
    const notices = () => heard.filter((payload) => payload.startsWith("s "));
    await waitUntil(() => notices().length >= count, { what: `${count} session notices` });
    return notices();
  };

  test("a refresh and an extended session are not announced; a shortened one is, and an ended one", async () => {
    const ann = await svc.signUp("ann");
    const sid = claims(ann.token).sid as string;
    const refreshed = await svc.call("POST", "/svc-api/v1/auth/refresh", { body: { refresh_token: ann.refresh } });
    expect(refreshed.status).toBe(200);
    await listener`update sessions set expires_at = expires_at + interval '1 day' where id = ${sid}`;
    await listener`update sessions set mfa_at = now() where id = ${sid}`;
    // Notices come in commit order: when the shortening's arrives, any of the changes before it had come.
    await listener`update sessions set expires_at = expires_at - interval '2 days' where id = ${sid}`;
    expect(await sessionNotices(1)).toEqual([`s ${sid}`]);

    const ended = await svc.call("POST", "/svc-api/v1/auth/logout", {
      body: { refresh_token: refreshed.body.refresh_token },
    });
    expect(ended.status).toBe(204);
    expect(await sessionNotices(2)).toEqual([`s ${sid}`, `s ${sid}`]);
  });

  test("a token checked after its session was renewed past its first expiry is still good, from memory or not", async () => {
    const bob = await svc.signUp("bob");
    const sid = claims(bob.token).sid as string;
    const me = () => svc.call("GET", "/svc-api/v1/users/me", { token: bob.token });
    expect((await me()).status).toBe(200); // its standing, expiry and all, now kept
    // The expiry the check kept passes; a renewal (unannounced) had moved the session's on.
    const before = heard.filter((payload) => payload.startsWith("s ")).length;
    await listener`update sessions set expires_at = now() - interval '1 second' where id = ${sid}`;
    await sessionNotices(before + 1);
    expect((await me()).status).toBe(401);
    await listener`update sessions set expires_at = now() + interval '1 day' where id = ${sid}`;
    expect((await me()).status).toBe(200);
  });
});
