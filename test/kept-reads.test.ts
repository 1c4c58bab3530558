// PostgreSQL's kept reads (src/db/postgres/kept-reads.ts) against a stand-in for Bun's SQL client and a
// clock the test turns: when memory answers, when it must not, and what a notice or a write does to it.
import { describe, expect, test } from "bun:test";
import type { HotReads } from "../src/db/dialect.ts";
import { EXPIRY_MARGIN_MS, keptReads, type Listener, STATE_CHANNEL } from "../src/db/postgres/kept-reads.ts";
import type { TokenState } from "../src/db/tokens.ts";

const BOUND = 1000;
const USER = "0190a5b4-0000-7000-8000-000000000001";
const SESSION = "0190a5b4-0000-7000-8000-0000000000aa";
const RENEWED = "0190a5b4-0000-7000-8000-0000000000bb";
const NEAR_ITS_END = "0190a5b4-0000-7000-8000-0000000000cc";

/** A LISTEN connection the test drives: it delivers pings and notices when told to. */
function fakeDatabase() {
  const handlers = new Map<string, { onnotify: (payload: string) => void; onlisten?: () => void }>();
  const pings: Array<[string, string]> = [];
  let pinged = () => {};
  const client: Listener = {
    async listen(channel, onnotify, onlisten) {
      handlers.set(channel, { onnotify, onlisten });
      onlisten?.();
      return { unlisten: async () => void handlers.delete(channel) };
    },
    async unsafe(_query, [channel, payload]) {
      pings.push([channel!, payload!]);
      pinged();
      return [];
    },
  };
  return {
    client,
    /** Resolves when the next ping is sent. */
    nextPing: () => new Promise<void>((resolve) => (pinged = resolve)),
    /** Delivers every ping sent so far, as the database would once they commit. */
    echo() {
      for (const [channel, payload] of pings.splice(0)) handlers.get(channel)?.onnotify(payload);
    },
    /** Drops the pings sent so far, as a lost connection would. */
    lose: () => void pings.splice(0),
    notice: (payload: string) => handlers.get(STATE_CHANNEL)?.onnotify(payload),
    /** The connection came back: every channel is listened to again. */
    reconnect() {
      for (const handler of handlers.values()) handler.onlisten?.();
    },
  };
}

/** The database's answers, counted; `state` is what the next read returns. */
function databaseReads() {
  const reads = {
    calls: 0,
    state: {
      revoked: false,
      expiresAt: "2099-01-01T00:00:00.000Z",
      versions: { users: 1, categories: 1 },
    } as TokenState,
    pending: null as null | (() => void),
    /** When set, the next read waits until release() is called. */
    hold: false,
  };
  const base: HotReads = {
    tokenState() {
      reads.calls++;
      const answer = structuredClone(reads.state);
      if (!reads.hold) return answer;
      reads.hold = false;
      return new Promise((resolve) => (reads.pending = () => resolve(answer)));
    },
    versions() {
      reads.calls++;
      return structuredClone(reads.state.versions);
    },
  };
  return { reads, base };
}

async function setup(stalenessMs = BOUND) {
  const database = fakeDatabase();
  const { reads, base } = databaseReads();
  const clock = { now: 0 };
  const kept = keptReads(database.client, base, { stalenessMs, now: () => clock.now });
  // The first request reads the database and starts listening; once a ping comes back, memory answers.
  await kept.tokenState(USER, "jti", SESSION);
  await Bun.sleep(0); // the listen() promises settle
  database.echo();
  // Listening began after that read started, so it was not kept: this one is.
  await kept.tokenState(USER, "jti", SESSION);
  return { database, reads, clock, kept };
}

const ask = async (kept: HotReads) => await kept.tokenState(USER, "jti", SESSION);

describe("kept reads", () => {
  test("once a ping has come back, a token's standing and the versions come from memory", async () => {
    const { reads, kept } = await setup();
    const calls = reads.calls;
    for (let i = 0; i < 5; i++) expect(await ask(kept)).toMatchObject({ revoked: false, versions: { users: 1 } });
    expect(await kept.versions()).toEqual({ users: 1, categories: 1 });
    expect(reads.calls).toBe(calls);
  });

  test("a kept session whose expiry has passed is asked of the database: a renewal is not announced", async () => {
    const { reads, kept } = await setup();
    // Kept with an expiry now past, as a session's renewal (a refresh) would have moved it unannounced.
    reads.state = { ...reads.state, expiresAt: "2000-01-01T00:00:00.000Z" };
    await kept.tokenState(USER, "jti", RENEWED);
    reads.state = { ...reads.state, expiresAt: "2099-01-01T00:00:00.000Z" };
    const calls = reads.calls;
    expect(await kept.tokenState(USER, "jti", RENEWED)).toMatchObject({
      revoked: false,
      expiresAt: "2099-01-01T00:00:00.000Z",
    });
    expect(reads.calls).toBe(calls + 1);
    // The expiry read then is kept: the next check is memory's again.
    await kept.tokenState(USER, "jti", RENEWED);
    expect(reads.calls).toBe(calls + 1);
    // One about to pass is asked of the database too: the token check reads its own clock a little later.
    reads.state = { ...reads.state, expiresAt: new Date(Date.now() + EXPIRY_MARGIN_MS / 2).toISOString() };
    await kept.tokenState(USER, "jti", NEAR_ITS_END);
    await kept.tokenState(USER, "jti", NEAR_ITS_END);
    expect(reads.calls).toBe(calls + 3);
  });

  test("a session's notice sends its next check to the database; a revoked answer is never kept", async () => {
    const { database, reads, kept } = await setup();
    database.notice(`s ${SESSION}`);
    reads.state = { ...reads.state, revoked: true, expiresAt: null };
    const calls = reads.calls;
    expect(await ask(kept)).toMatchObject({ revoked: true });
    expect(await ask(kept)).toMatchObject({ revoked: true });
    expect(reads.calls).toBe(calls + 2);
  });

  test("a revoked token's notice (j) and a version's notice (v) apply at once", async () => {
    const { database, reads, kept } = await setup();
    await kept.tokenState(USER, "old", undefined); // a sessionless token, now kept
    database.notice("v users 9");
    const calls = reads.calls;
    expect(await kept.versions()).toEqual({ users: 9, categories: 1 });
    expect(await kept.tokenState(USER, "old", undefined)).toMatchObject({ versions: { users: 9 } });
    expect(reads.calls).toBe(calls);
    database.notice("j old");
    await kept.tokenState(USER, "old", undefined);
    expect(reads.calls).toBe(calls + 1);
  });

  test("no ping back within the bound (a lost or lagging connection): every check goes to the database", async () => {
    const { database, reads, clock, kept } = await setup();
    clock.now += BOUND; // the newest ping heard was sent exactly a bound ago: still fresh
    let calls = reads.calls;
    await ask(kept);
    expect(reads.calls).toBe(calls);
    database.lose();
    clock.now += 1;
    calls = reads.calls;
    await ask(kept);
    await ask(kept);
    expect(reads.calls).toBe(calls + 2);
    // A ping sent now (the one in flight is given up after a bound) comes back: memory answers again.
    clock.now += BOUND;
    await ask(kept);
    database.echo();
    calls = reads.calls;
    await ask(kept);
    expect(reads.calls).toBe(calls);
  });

  test("a listener that never hears anything (LISTEN behind a pooler in transaction mode): memory is never used", async () => {
    const database = fakeDatabase();
    const { reads, base } = databaseReads();
    const clock = { now: 0 };
    const kept = keptReads(database.client, base, { stalenessMs: BOUND, now: () => clock.now });
    for (let i = 0; i < 100; i++) {
      await ask(kept);
      database.lose();
      clock.now += BOUND / 2;
    }
    expect(reads.calls).toBe(100);
  });

  test("a memory kept fresh by pings stays in use as time passes", async () => {
    const bound = 40;
    const { database, reads, clock, kept } = await setup(bound);
    const calls = reads.calls;
    for (let i = 0; i < 10; i++) {
      const sent = database.nextPing(); // a quarter of a bound after the last came back
      clock.now += bound / 2;
      await ask(kept);
      await sent;
      database.echo();
    }
    expect(reads.calls).toBe(calls);
  });

  test("after a write of this instance, memory waits for a ping sent after it, not one sent before", async () => {
    const { database, reads, kept } = await setup();
    const sent = database.nextPing();
    const settling = kept.settled();
    await sent; // a ping is on its way ...
    kept.wrote(); // ... when a write ends ...
    database.echo(); // ... and it comes back: not enough
    await settling;
    const calls = reads.calls;
    await ask(kept);
    expect(reads.calls).toBe(calls + 1);
    database.echo(); // the ping sent after the write
    await ask(kept);
    expect(reads.calls).toBe(calls + 1);
  });

  test("an answer read while a notice arrived is not kept", async () => {
    const { database, reads, kept } = await setup();
    database.notice(`s ${SESSION}`);
    reads.hold = true;
    const reading = ask(kept);
    database.notice(`s ${SESSION}`); // the session changed while the read was on its way
    reads.pending!();
    await reading;
    const calls = reads.calls;
    await ask(kept);
    expect(reads.calls).toBe(calls + 1);
  });

  test("listening again after a lost connection forgets everything kept; a truncation too", async () => {
    const { database, reads, kept } = await setup();
    database.reconnect();
    database.echo();
    let calls = reads.calls;
    await ask(kept);
    expect(reads.calls).toBe(calls + 1);
    database.notice("reset");
    calls = reads.calls;
    await kept.versions();
    expect(reads.calls).toBe(calls + 1);
  });

  test("after a reset and a read again, a version notice updates the versions and keeps the standings", async () => {
    const { database, reads, kept } = await setup();
    database.notice("reset"); // versions and standings forgotten
    await ask(kept); // read again: kept
    database.notice("v users 2");
    const calls = reads.calls;
    expect(await ask(kept)).toMatchObject({ revoked: false, versions: { users: 2 } });
    expect(reads.calls).toBe(calls);
  });

  test("a token of another user naming the session is not answered from memory", async () => {
    const { reads, kept } = await setup();
    const calls = reads.calls;
    await kept.tokenState("0190a5b4-0000-7000-8000-000000000002", "jti", SESSION);
    expect(reads.calls).toBe(calls + 1);
  });

  test("settled() resolves once a ping sent after the call has come back", async () => {
    const { database, kept } = await setup();
    let done = false;
    const settling = kept.settled().then(() => (done = true));
    await Bun.sleep(0);
    expect(done).toBe(false);
    database.echo();
    await settling;
    expect(done).toBe(true);
  });

  test("SVC_DB_STALENESS=0: nothing is kept", async () => {
    const database = fakeDatabase();
    const { reads, base } = databaseReads();
    const kept = keptReads(database.client, base, { stalenessMs: 0 });
    for (let i = 0; i < 3; i++) await ask(kept);
    expect(reads.calls).toBe(3);
  });
});
