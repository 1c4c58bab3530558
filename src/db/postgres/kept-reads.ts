// PostgreSQL's answers to the reads of every authenticated request (a token's standing, the table
// versions) kept in memory, and kept right by the database itself: triggers announce on `svc_state`
// every version bump, every session ended or shortened and every token revoked (migrations
// state_notifications, quiet_session_renewals), whichever instance or command wrote. A session's renewal
// is not announced: a kept expiry that has passed is read again instead. Such a round trip was most of what an
// authenticated read cost on PostgreSQL (bench/results.md, "Where a PostgreSQL read goes").
//
// Memory is used only while it is provably recent. Notifications reach a listener in commit order, so
// when this instance hears back a ping it sent at time t (on its own channel, over the same connection),
// it has heard every change committed before t. Memory answers at time now only while a ping sent
// within `stalenessMs` of now has come back, and only once a ping sent after this instance's latest
// write has: a lost, lagging or not yet open listening connection, or a write of our own not yet heard,
// sends each request to the database, as if nothing were kept. So a change on another instance is seen
// here within stalenessMs (in practice as soon as its notice arrives), and one made here at once.
import { chain } from "../../lib/awaitable.ts";
import { setBounded } from "../../lib/bounded-map.ts";
import type { HotReads } from "../dialect.ts";
import type { TokenChecks } from "../store.ts";
import type { TableVersions, TokenState } from "../tokens.ts";

/** The channel the state_notifications triggers announce on. */
export const STATE_CHANNEL = "svc_state";

/** Token standings kept: each a session (or a sessionless token) seen valid, about 150 bytes. */
export const KEPT_STANDINGS = 50_000;

/** Pings sent and not yet heard back that are remembered. */
const SENT_KEPT = 16;

/** Pings go out this many times per staleness bound while requests come. */
const PINGS_PER_BOUND = 4;

/** Without a request for this many bounds, pinging stops; the next request reads the database and starts it again. */
const IDLE_BOUNDS = 20;

export interface KeptReads extends HotReads {
  /** Called once a write of this instance has ended (committed or not): memory waits for a ping sent after it. */
  wrote(): void;
  /** Resolves once this instance has heard every change committed before the call. */
  settled(): Promise<void>;
  /** Token checks answered from memory and from the database so far. */
  checks(): TokenChecks;
  close(): Promise<void>;
}

/** What kept reads need of Bun's SQL client: its LISTEN, and a statement to send a ping with. */
export interface Listener {
  listen(channel: string, onnotify: (payload: string) => void, onlisten?: () => void): Promise<Subscription>;
  unsafe(query: string, parameters: string[]): Promise<unknown>;
}

interface Subscription {
  unlisten(): Promise<void>;
}

export interface KeptReadsOptions {
  /** How old the newest change this instance may not have heard of can be; 0 keeps nothing. */
  stalenessMs: number;
  /** A monotonic clock in ms (tests turn it). */
  now?: () => number;
  /** Told when listening could not start (it is tried again at the next request). */
  onError?: (error: unknown) => void;
}

/**
 * How near its end a kept session is read from the database again: the token check compares the expiry with
 * its own clock a little later (after the user's row, perhaps a round trip away), and a renewal may have moved
 * it on unannounced.
 */
export const EXPIRY_MARGIN_MS = 5000;

/** Whether a kept expiry has passed, or will within the margin, by the wall clock the token check reads. */
const lapsing = (expiresAt: string | null) =>
  expiresAt !== null && Date.parse(expiresAt) - EXPIRY_MARGIN_MS <= Date.now();

interface Standing {
  userId: string;
  expiresAt: string | null;
}

interface Ping {
  at: number;
  /** Writes ended before it was sent. */
  writes: number;
}

export function keptReads(
  client: Listener,
  base: HotReads,
  { stalenessMs, now = () => performance.now(), onError }: KeptReadsOptions,
): KeptReads {
  const checks: TokenChecks = { memory: 0, database: 0 };
  if (stalenessMs <= 0)
    return {
      versions: base.versions,
      tokenState(id, jti, sid) {
        checks.database++;
        return base.tokenState(id, jti, sid);
      },
      wrote() {},
      settled: async () => {},
      checks: () => ({ ...checks }),
      close: async () => {},
    };
  const pingChannel = `svc_ping_${crypto.randomUUID().replaceAll("-", "")}`;
  const intervalMs = stalenessMs / PINGS_PER_BOUND;

  let versions: TableVersions | undefined;
  const standings = new Map<string, Standing>();
  /** Notices applied and memory cleared, so far: a read that spans one is not kept. */
  let changes = 0;
  let writes = 0;
  let heard: Ping = { at: -Infinity, writes: -1 };
  const sent = new Map<number, Ping>();
  let pings = 0;
  let inFlight: { seq: number; at: number } | null = null;
  let again = false;
  let askedAt = -Infinity;
  let timer: Timer | undefined;
  let listening: Promise<Subscription[]> | null = null;
  /** listen() was called and has not failed: pings may go (the first answer to one can come once it is acknowledged). */
  let started = false;
  let closed = false;
  const waiters: Array<{ seq: number; resolve: () => void }> = [];

  const fresh = (at: number) => heard.writes >= writes && at - heard.at <= stalenessMs;

  function clear() {
    versions = undefined;
    standings.clear();
    changes++;
  }

  function noticed(payload: string) {
    changes++;
    const [kind, key, value] = payload.split(" ");
    if (kind === "s" && key) standings.delete(key);
    else if (kind === "j" && key) standings.delete(`j ${key}`);
    else if (kind === "v" && (key === "users" || key === "categories")) {
      // Unknown versions stay unknown: the next read asks the database for both.
      if (versions) versions = { ...versions, [key]: Number(value) };
    } else clear(); // a truncation, or a notice this svc does not know: nothing kept can be trusted
  }

  function echoed(payload: string) {
    const seq = Number(payload);
    const answered = sent.get(seq);
    if (!answered) return;
    for (const earlier of sent.keys()) if (earlier <= seq) sent.delete(earlier);
    heard = answered;
    if (inFlight && inFlight.seq <= seq) inFlight = null;
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.seq <= seq) waiters.splice(i, 1)[0]!.resolve();
    }
    if (again || heard.writes < writes) ping();
    else if (now() - askedAt < IDLE_BOUNDS * stalenessMs || waiters.length > 0) later();
  }

  function later() {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      ping();
    }, intervalMs);
    timer.unref();
  }

  function ping() {
    if (closed || !started) return;
    const at = now();
    // One ping at a time; one lost (a dropped connection) stops counting after a bound.
    if (inFlight && at - inFlight.at < stalenessMs) {
      again = true;
      return;
    }
    again = false;
    const seq = ++pings;
    inFlight = { seq, at };
    sent.set(seq, { at, writes });
    // Pings never heard back (a listener that hears nothing, behind a pooler) are forgotten, oldest first.
    if (sent.size > SENT_KEPT) sent.delete(sent.keys().next().value!);
    client.unsafe("select pg_notify($1, $2)", [pingChannel, String(seq)]).catch(() => {
      // The database did not take it: the next request reads the database and pings again.
      if (inFlight?.seq === seq) inFlight = null;
    });
  }

  function listen() {
    if (listening || closed) return;
    started = true;
    listening = Promise.all([
      // Every (re)subscription: what was announced while not listening is lost, so nothing kept stays.
      client.listen(STATE_CHANNEL, noticed, clear),
      client.listen(pingChannel, echoed, () => {
        inFlight = null;
        ping();
      }),
    ]);
    listening.catch((error) => {
      listening = null;
      started = false;
      onError?.(error);
    });
  }

  /** On a read that memory could not answer: make sure it soon can. */
  function wake() {
    if (!listening) listen();
    else ping();
  }

  return {
    tokenState(id, jti, sid) {
      const at = now();
      askedAt = at;
      const key = sid === undefined ? `j ${jti}` : sid;
      if (versions && fresh(at)) {
        const kept = standings.get(key);
        // An expiry passed, or about to, is asked of the database: a session's renewal moves it unannounced
        // (the trigger announces a session ended or shortened, not one extended: migration quiet_session_renewals).
        if (kept && kept.userId === id && !lapsing(kept.expiresAt)) {
          checks.memory++;
          return { revoked: false, expiresAt: kept.expiresAt, versions };
        }
      } else wake();
      checks.database++;
      const before = changes;
      return chain(base.tokenState(id, jti, sid), (state: TokenState | null) => {
        if (state && changes === before) {
          versions = state.versions;
          if (!state.revoked) setBounded(standings, key, { userId: id, expiresAt: state.expiresAt }, KEPT_STANDINGS);
        }
        return state;
      });
    },
    versions() {
      const at = now();
      askedAt = at;
      if (versions && fresh(at)) return versions;
      wake();
      const before = changes;
      return chain(base.versions(), (read: TableVersions) => {
        if (changes === before) versions = read;
        return read;
      });
    },
    wrote() {
      writes++;
      if (listening && now() - askedAt < IDLE_BOUNDS * stalenessMs) ping();
    },
    async settled() {
      listen();
      await listening;
      await new Promise<void>((resolve) => {
        waiters.push({ seq: pings + 1, resolve });
        // A ping in flight was sent before this call: one more goes after it.
        if (inFlight) again = true;
        ping();
      });
    },
    checks: () => ({ ...checks }),
    async close() {
      closed = true;
      clearTimeout(timer);
      const subscriptions = await listening?.catch(() => []);
      await Promise.all((subscriptions ?? []).map((subscription) => subscription.unlisten()));
    },
  };
}
