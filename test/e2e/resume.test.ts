// Resuming subscriptions end to end (#43): clients that follow `categoryEvents` with their last cursor
// through expiring tokens, killed sockets and a restarted instance receive every change once, in
// order, while another user writes at a steady pace; on SQLite (one instance on a file) and on
// PostgreSQL (two instances on one database, the writes and the client alternating between them).
// Then the log's bounds: the pruning job keeps it within SVC_EVENTS_KEEP, and an old cursor gets RESYNC.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import { createClient as createSseClient } from "graphql-sse";
import { createClient as createWsClient } from "graphql-ws";
import { openPostgresStore } from "../../src/db/postgres/store.ts";
import { openSqliteStore } from "../../src/db/sqlite/store.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { pruneExpired, storeJobs } from "../../src/process/pruning.ts";
import { testApp, testConfig } from "../helpers.ts";
import { createTestDatabase, postgresAvailable, postgresConfig } from "../postgres.ts";
import { type Event, opened, RESUMABLE, type Result } from "../subscriptions.ts";
import { cameToHold } from "../support/wait.ts";

const V1 = "/svc-api/v1";
/** Categories the writer creates, and the time it takes (its pace is the scenario, not a synchronisation). */
const WRITES = 200;
const WRITING_MS = 10_000;
/** What the writer creates last: once it has come, nothing else is on its way. */
const sentinel = (prefix: string) => `${prefix}-sentinel`;
const KEPT = 50;
const CONFIG = {
  jwt: { ...testConfig().jwt, ttlSeconds: 3 },
  subscriptions: { buffer: 1024, eventsKept: KEPT },
};

type Transport = "ws" | "sse";

/** One running svc: a store on the shared database, its app, and the server it listens with. */
interface Instance {
  store: VersionedStore;
  app: Awaited<ReturnType<typeof testApp>>["app"];
  server: Server<unknown>;
  base: string;
  /** Which start of its slot this is (0 for the first; a restart makes the next). */
  generation: number;
  call(method: string, path: string): Promise<{ text: string }>;
}

/** A database and the slots of its instances; a restart replaces an instance in its slot. */
interface Deployment {
  slots: Array<Promise<Instance>>;
  openStore(): Promise<VersionedStore>;
  close(): Promise<void>;
}

async function start(store: VersionedStore, generation: number): Promise<Instance> {
  const { app } = await testApp({ on: store, config: CONFIG });
  const server = app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    store,
    app,
    server,
    base,
    generation,
    async call(method, path) {
      return { text: await (await fetch(base + path, { method })).text() };
    },
  };
}

/** Stops an instance as a crash would: its connections dropped, then its streams and its store closed. */
async function stop(instance: Instance): Promise<void> {
  await instance.server.stop(true);
  await instance.app.closeStreams();
  await instance.store.close();
}

async function deploy(count: number, openStore: () => Promise<VersionedStore>, drop: () => Promise<void>) {
  const slots = await Promise.all(Array.from({ length: count }, async () => start(await openStore(), 0)));
  const deployment: Deployment = {
    slots: slots.map((instance) => Promise.resolve(instance)),
    openStore,
    async close() {
      for (const slot of deployment.slots) await stop(await slot);
      await drop();
    },
  };
  return deployment;
}

/** A JSON request over the socket; throws unless the status is `expect`. */
async function http(instance: Instance, path: string, body: unknown, token?: string, expect = 200) {
  const response = await fetch(instance.base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expect) throw new Error(`${path}: ${response.status} ${text}`);
  // any: the answer's JSON, read field by field.
  return JSON.parse(text || "null") as any;
}

/** A user's session in bearer mode: a token, renewed through /auth/refresh on whichever instance is asked. */
class Session {
  private constructor(
    private token: string,
    private refreshToken: string,
    private expiresAt: number,
  ) {}

  static async signUp(instance: Instance, username: string): Promise<Session> {
    const password = "correct horse battery";
    await http(
      instance,
      `${V1}/users/create`,
      { username, email: `${username}@example.com`, password },
      undefined,
      201,
    );
    return Session.from(await http(instance, `${V1}/auth/login`, { username, password }));
  }

  private static from(answer: { token: string; refresh_token: string }): Session {
    // When the token itself says it expires (its exp, in whole seconds from a floored iat): now + expires_in
    // overstated it by up to a second, all of the margin fresh() keeps for 3-second tokens.
    const { exp } = JSON.parse(Buffer.from(answer.token.split(".")[1]!, "base64url").toString()) as { exp: number };
    return new Session(answer.token, answer.refresh_token, exp * 1000);
  }

  async refresh(instance: Instance): Promise<string> {
    const next = Session.from(await http(instance, `${V1}/auth/refresh`, { refresh_token: this.refreshToken }));
    Object.assign(this, next);
    return this.token;
  }

  /** The token, refreshed first when it has less than a second left. */
  async fresh(instance: Instance): Promise<string> {
    return this.expiresAt - Date.now() < 1000 ? this.refresh(instance) : this.token;
  }

  get current(): string {
    return this.token;
  }
}

/** One subscription, with its end: the error code it ended with, "complete", "killed", or "dropped" (the socket). */
interface Subscription {
  ended: Promise<string>;
  /** Closes its connection abruptly, as a lost network does. */
  kill(): void;
  /** Lets it go: the client has what it wanted. */
  dispose(): void;
}

function subscribe(
  transport: Transport,
  instance: Instance,
  token: string,
  after: string | null,
  onEvent: (e: Event) => void,
) {
  const url = `${instance.base}/graphql`;
  let code: string | null = null;
  let end!: (how: string) => void;
  const ended = new Promise<string>((resolve) => (end = resolve));
  const sink = {
    next(result: Result) {
      const error = result.errors?.[0];
      if (error) code = String(error.extensions?.code ?? error.message);
      else if (result.data) onEvent(result.data.categoryEvents);
    },
    error: (error: unknown) => end(code ?? `dropped: ${error instanceof Error ? error.message : String(error)}`),
    complete: () => end(code ?? "complete"),
  };
  const request = { query: RESUMABLE, variables: after === null ? {} : { after } };
  if (transport === "ws") {
    const client = createWsClient({
      url: url.replace(/^http/, "ws"),
      connectionParams: { Authorization: `Bearer ${token}` },
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => {},
    });
    client.subscribe(request, sink as never);
    void ended.then(() => client.dispose());
    return {
      ended,
      kill: () => {
        end("killed");
        client.terminate();
      },
      dispose: () => {
        end("disposed");
        void client.dispose();
      },
    } satisfies Subscription;
  }
  const client = createSseClient({ url, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
  client.subscribe(request, sink as never);
  void ended.then(() => client.dispose());
  // Disposing of the client aborts its request: the stream's connection goes at once.
  const close = (how: string) => () => {
    end(how);
    client.dispose();
  };
  return { ended, kill: close("killed"), dispose: close("disposed") } satisfies Subscription;
}

/**
 * A client following categoryEvents until the sentinel arrives: after TOKEN_EXPIRED it refreshes its token
 * on the next instance and re-subscribes there with its last cursor; after any other end, it re-subscribes
 * with its last cursor on the same slot (a restarted instance's successor).
 */
class Follower {
  readonly events: Event[] = [];
  /** How each subscription ended, and where the next one went (slot.generation). */
  readonly endings: string[] = [];
  readonly places: string[] = [];
  slot = 0;
  private current: Subscription | null = null;
  private waiters: Array<() => void> = [];
  readonly done: Promise<void>;

  constructor(
    readonly transport: Transport,
    private readonly deployment: Deployment,
    private readonly session: Session,
    private readonly sentinel: string,
    private readonly from: string | null,
  ) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    let after = this.from;
    let token = this.session.current;
    while (this.events.at(-1)?.category?.name !== this.sentinel) {
      const instance = await this.deployment.slots[this.slot]!;
      this.places.push(`${this.slot}.${instance.generation}`);
      const subscription = subscribe(this.transport, instance, token, after, (event) => {
        this.events.push(event);
        after = event.cursor!;
        for (const wake of this.waiters.splice(0)) wake();
        if (event.category?.name === this.sentinel) subscription.dispose();
      });
      this.current = subscription;
      const ending = await subscription.ended;
      if (this.events.at(-1)?.category?.name === this.sentinel) break;
      this.endings.push(ending);
      if (ending === "TOKEN_EXPIRED") {
        this.slot = (this.slot + 1) % this.deployment.slots.length;
        token = await this.refreshOnSlot();
      }
    }
  }

  /**
   * Refreshes on the slot's instance. A restart may stop that instance while the request is on its way (the
   * restart waits for the writer's request, not this one): as any client would, it asks the slot's successor.
   * The refresh token is the same, and svc's reuse window answers a repeat with the same pair.
   */
  private async refreshOnSlot(): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const instance = await this.deployment.slots[this.slot]!;
      try {
        return await this.session.refresh(instance);
      } catch (error) {
        const dropped = error instanceof Error && /ECONNRESET|ConnectionRefused|ECONNREFUSED/.test(String(error));
        // A restart replaces the slot's promise before it stops the old instance: reading the slot again
        // waits for the successor. A connection dropped by anything else is a failure.
        if (!dropped || attempt === 3 || (await this.deployment.slots[this.slot]!) === instance) throw error;
      }
    }
  }

  kill(): void {
    this.current?.kill();
  }

  /** Resolves once it holds `n` events. */
  async received(n: number): Promise<void> {
    while (this.events.length < n) await new Promise<void>((wake) => this.waiters.push(wake));
  }
}

/** Creates WRITES categories over WRITING_MS, alternating between the slots, then the sentinel. */
class Writer {
  readonly names = Array.from({ length: WRITES }, (_, i) => `c${String(i).padStart(3, "0")}`);
  /** The write under way: a restart waits for it, so no write is cut off halfway. */
  inflight: Promise<void> = Promise.resolve();
  readonly done: Promise<void>;

  constructor(
    private readonly deployment: Deployment,
    private readonly session: Session,
    private readonly prefix: string,
  ) {
    this.names = this.names.map((name) => `${prefix}-${name}`);
    this.done = this.run();
  }

  private async run(): Promise<void> {
    const began = performance.now();
    for (const [i, name] of this.names.entries()) {
      this.inflight = this.create(i, name);
      await this.inflight;
      const due = began + ((i + 1) * WRITING_MS) / WRITES;
      if (due > performance.now()) await Bun.sleep(due - performance.now());
    }
    this.inflight = this.create(0, sentinel(this.prefix));
    await this.inflight;
  }

  private async create(i: number, name: string): Promise<void> {
    // The slot is read at once: a restart that begins after this waits for this write to end.
    const slot = this.deployment.slots[i % this.deployment.slots.length]!;
    const instance = await slot;
    const query = `mutation ($name: String!) { createCategory(input: { name: $name }) { id } }`;
    const answer = await http(instance, "/graphql", { query, variables: { name } }, await this.session.fresh(instance));
    if (answer.errors) throw new Error(`${name}: ${JSON.stringify(answer.errors)}`);
  }
}

/** Stops the instance in `slot` once the write under way has ended, and starts a new one on the same database. */
async function restart(deployment: Deployment, slot: number, writer: Writer): Promise<void> {
  let started!: (instance: Instance) => void;
  const old = deployment.slots[slot]!;
  deployment.slots[slot] = new Promise((resolve) => (started = resolve));
  await writer.inflight.catch(() => {});
  const previous = await old;
  await stop(previous);
  started(await start(await deployment.openStore(), previous.generation + 1));
}

/** The names and cursors a follower got: every write once, in order, the cursors increasing. */
function expectEverything(follower: Follower, writer: Writer, prefix: string): void {
  const names = follower.events.map((event) => event.category?.name ?? event.kind);
  expect(names).toEqual([...writer.names, sentinel(prefix)]);
  expect(follower.events.every((event) => event.kind === "CREATED")).toBe(true);
  const cursors = follower.events.map((event) => event.cursor!);
  for (let i = 1; i < cursors.length; i++) expect(cursors[i - 1]! < cursors[i]!).toBe(true);
}

const sqlite = async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-resume-"));
  const file = join(dir, "svc.db");
  return deploy(
    1,
    async () => openSqliteStore(file),
    async () => rmSync(dir, { recursive: true, force: true }),
  );
};
const postgres = async () => {
  const database = await createTestDatabase("resume");
  return deploy(
    2,
    () => openPostgresStore(postgresConfig(database.url)),
    () => database.drop(),
  );
};
const onPostgres = await postgresAvailable();

describe.each([
  ["SQLite (one instance on a file)", sqlite, true],
  ["PostgreSQL (two instances on one database)", postgres, onPostgres],
] as const)("resuming on %s", (_, make, available) => {
  let deployment: Deployment;
  let writerSession: Session;
  const sessions: Partial<Record<Transport, Session>> = {};
  let firstCursor: string;
  /** Where the last scenario ended: the next one's followers start there (null: before any change). */
  let lastCursor: string | null = null;

  beforeAll(async () => {
    if (!available) return;
    deployment = await make();
    const instance = await deployment.slots[0]!;
    writerSession = await Session.signUp(instance, "writer");
    for (const transport of ["ws", "sse"] as const)
      sessions[transport] = await Session.signUp(instance, `reader-${transport}`);
  });
  afterAll(async () => {
    await deployment?.close();
  });

  /**
   * A ws and an sse follower on slot 0, open before the writer starts; `during` acts on them meanwhile. They
   * start from the last scenario's end: a subscription without a cursor may still be handed a change made
   * before it, should its instance not have read that change yet.
   */
  async function scenario(prefix: string, during: (followers: Follower[], writer: Writer) => Promise<void>) {
    const followers = (["ws", "sse"] as const).map(
      (t) => new Follower(t, deployment, sessions[t]!, sentinel(prefix), lastCursor),
    );
    await opened(await deployment.slots[0]!, 2);
    const writer = new Writer(deployment, writerSession, prefix);
    await during(followers, writer);
    await writer.done;
    await Promise.all(followers.map((follower) => follower.done));
    for (const follower of followers) expectEverything(follower, writer, prefix);
    lastCursor = followers[0]!.events.at(-1)!.cursor!;
    return followers;
  }

  test.skipIf(!available)(
    "through expiring tokens (3 s), refreshed on alternating instances, a client gets every change once, in order",
    async () => {
      const followers = await scenario("expiry", async () => {});
      firstCursor = followers[0]!.events[0]!.cursor!;
      for (const follower of followers) {
        // Ten seconds of 3-second tokens: at least two expiries, and nothing else ended a subscription.
        expect(follower.endings.length).toBeGreaterThanOrEqual(2);
        expect(new Set(follower.endings)).toEqual(new Set(["TOKEN_EXPIRED"]));
        if (deployment.slots.length > 1) expect(new Set(follower.places).size).toBe(2);
      }
    },
    40_000,
  );

  test.skipIf(!available)(
    "through a killed socket and a restart of the instance it is on, a client gets every change once, in order",
    async () => {
      const restarted: Array<{ follower: Follower; at: string }> = [];
      const followers = await scenario("outages", async (followers, writer) => {
        await Promise.all(
          followers.map(async (follower, i) => {
            await follower.received(40 + 20 * i);
            follower.kill();
            await follower.received(100 + 30 * i);
            const slot = follower.slot;
            restarted.push({ follower, at: `${slot}.${(await deployment.slots[slot]!).generation}` });
            await restart(deployment, slot, writer);
          }),
        );
      });
      for (const follower of followers) {
        expect(follower.endings).toContain("killed");
        // Its instance went: its stream was dropped or completed, and it resumed on the successor.
        const mine = restarted.find((r) => r.follower === follower)!;
        const [slot, generation] = mine.at.split(".").map(Number);
        const after = follower.places.slice(follower.places.lastIndexOf(mine.at) + 1);
        expect(after).toContain(`${slot}.${generation! + 1}`);
        expect(follower.endings.filter((e) => e !== "killed" && e !== "TOKEN_EXPIRED").length).toBeGreaterThanOrEqual(
          1,
        );
      }
    },
    40_000,
  );

  test.skipIf(!available)(
    `the pruning job keeps at most SVC_EVENTS_KEEP (${KEPT}) events, the newest among them`,
    async () => {
      const { store } = await deployment.slots[0]!;
      const before = await store.categoryEvents.bounds();
      expect((await store.categoryEvents.after(0, 10_000)).length).toBeGreaterThan(KEPT);
      const { subscriptions, auditRetentionSeconds } = testConfig(CONFIG);
      const jobs = storeJobs(store, auditRetentionSeconds, {
        kept: subscriptions.eventsKept,
        keptForSeconds: subscriptions.eventsKeptForSeconds,
      });
      await pruneExpired({ jobs });
      const left = await store.categoryEvents.after(0, 10_000);
      expect(left.length).toBeLessThanOrEqual(KEPT);
      expect(left.at(-1)!.seq).toBe(before.last!);
      expect((await store.categoryEvents.bounds()).last).toBe(before.last);
    },
  );

  test.skipIf(!available)(
    "a cursor the log no longer holds (pruned to 1) gets RESYNC first, then the changes after it",
    async () => {
      const instance = await deployment.slots.at(-1)!;
      await instance.store.categoryEvents.prune(1, "1970-01-01T00:00:00.000Z", 10_000);
      for (const transport of ["ws", "sse"] as const) {
        const events: Event[] = [];
        const token = await sessions[transport]!.refresh(instance);
        const subscription = subscribe(transport, instance, token, firstCursor, (event) => events.push(event));
        await opened(instance, 1);
        const name = `after-prune-${transport}`;
        await http(
          instance,
          "/graphql",
          {
            query: `mutation { createCategory(input: { name: "${name}" }) { id } }`,
          },
          await writerSession.fresh(instance),
        );
        await cameToHold(() => events.length >= 2, { timeoutMs: 5000 });
        subscription.dispose();
        expect(events.map((event) => event.category?.name ?? event.kind)).toEqual(["RESYNC", name]);
        await opened(instance, 0);
      }
    },
    15_000,
  );
});
