// Builds an app on a fresh in-memory database and talks to it through app.handle.
import { expect } from "bun:test";
import { type AppDeps, createApp } from "../src/app.ts";
import type { Backups } from "../src/backup/service.ts";
import type { Clock } from "../src/backup/clock.ts";
import { MINIMAL_PASSWORD_COST, parseConfig, type Config } from "../src/config/index.ts";
import { openPostgresStore } from "../src/db/postgres/store.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import type { Store, VersionedStore } from "../src/db/store.ts";
import { auditEvent, CLI_ORIGIN } from "../src/audit/model.ts";
import { createLoggers } from "../src/observability/log.ts";
import type { InProcessVia } from "../src/http/outer-handler.ts";
import { createTestDatabase, postgresConfig, type TestDatabase } from "./postgres.ts";

export const TEST_SECRET = "test-secret-that-is-at-least-32-bytes-long";

/** Subscriptions' token recheck and per-subscriber buffer, short: a revocation or a slow reader shows at once. */
const QUICK_SUBSCRIPTIONS = { recheckMs: 50, buffer: 32 };

/** A login throttle that blocks an account for a minute after `maxFailures` in a row (clients never). */
export function blockAfter(maxFailures: number): Config["loginThrottle"] {
  return { maxFailures, backoffBaseMs: 60_000, backoffMaxMs: 60_000, clientMaxFailures: 100, clientWindowMs: 60_000 };
}

export type ConfigOverrides = Partial<Omit<Config, "graphql" | "subscriptions" | "signup">> & {
  graphql?: Partial<Config["graphql"]>;
  subscriptions?: Partial<Config["subscriptions"]>;
  signup?: Partial<Config["signup"]>;
};

/** Tests sign up many accounts from one address (app.handle has none): the sign-up limit's own tests set it. */
const UNTHROTTLED_SIGNUPS = { clientMax: 1_000_000 };

export function testConfig(overrides: ConfigOverrides = {}): Config {
  const base = parseConfig({ SVC_ENV: "test", SVC_JWT_SECRET: TEST_SECRET, SVC_DATABASE_URL: "sqlite::memory:" });
  return {
    ...base,
    passwordCost: MINIMAL_PASSWORD_COST,
    ...overrides,
    graphql: { ...base.graphql, ...overrides.graphql },
    subscriptions: { ...base.subscriptions, ...QUICK_SUBSCRIPTIONS, ...overrides.subscriptions },
    signup: { ...base.signup, ...UNTHROTTLED_SIGNUPS, ...overrides.signup },
  };
}

export interface TestAppOptions {
  config?: ConfigOverrides;
  /** Serve from this store instead of a fresh one (several apps on one database). */
  on?: VersionedStore;
  /** Wraps the store, e.g. to make one method fail. */
  store?: (store: VersionedStore) => VersionedStore;
  /** The backups the app reports and runs (admin/backups, health, metrics); none by default. */
  backups?: Backups;
  /** The clock the app's summaries of repeated log lines keep time by (src/observability/log-dedupe.ts). */
  clock?: Clock;
  /** The mail sender's figures the app reports (metrics, health); none by default. */
  mail?: AppDeps["mail"];
  /** OpenID providers discovered already (the app's own would be discovered in the background). */
  oidcProviders?: AppDeps["oidcProviders"];
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // any: the parsed JSON of whatever the route returned; tests assert on its fields directly.
  body: any;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is, with no Content-Type unless given. */
  raw?: string;
  token?: string;
  headers?: Record<string, string>;
  /** The listener and socket the request comes in on, as a server would hand them over (default: public, no peer). */
  via?: InProcessVia;
}

/** TEST_DATABASE=postgres runs the API tests on one throwaway PostgreSQL database, emptied per app. */
const ON_POSTGRES = process.env.TEST_DATABASE === "postgres";
let shared: Promise<{ database: TestDatabase; store: VersionedStore }> | undefined;

async function freshStore(): Promise<VersionedStore> {
  if (!ON_POSTGRES) return openSqliteStore(":memory:");
  shared ??= createTestDatabase("api").then(async (database) => ({
    database,
    store: await openPostgresStore(postgresConfig(database.url)),
  }));
  const { database, store } = await shared;
  await database.truncate();
  // Emptied by another connection, as another instance would: heard of before the test reads.
  await store.settled?.();
  return store;
}

/** Called once after every test file (test/setup.ts): closes and drops the shared database. */
export async function releaseSharedDatabase(): Promise<void> {
  if (!shared) return;
  const { database, store } = await shared;
  shared = undefined;
  await store.close();
  await database.drop();
}

export async function testApp(options: TestAppOptions = {}) {
  const config = testConfig(options.config);
  const base = options.on ?? (await freshStore());
  const store = options.store ? options.store(base) : base;
  const logLines: string[] = [];
  // Written to at once, line by line (a stream would hand its chunks on later): a test reads its logs
  // the moment a request is answered.
  const sink = {
    write(chunk: string) {
      logLines.push(...String(chunk).trim().split("\n"));
      return true;
    },
  };
  const app = createApp({
    config,
    store,
    loggers: createLoggers("debug", sink),
    backups: options.backups,
    mail: options.mail,
    clock: options.clock,
    oidcProviders: options.oidcProviders,
  });

  async function call(method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }), opts.via);
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  let counter = 0;
  /** Creates a user and logs in; returns the user and a token. */
  async function signUp(username = `user${++counter}`, password = "correct horse battery") {
    const created = await call("POST", "/svc-api/v1/users/create", {
      body: { username, email: `${username}@example.com`, password },
    });
    if (created.status !== 201) throw new Error(`sign-up failed: ${created.status} ${created.text}`);
    const login = await call("POST", "/svc-api/v1/auth/login", { body: { username, password } });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
    return {
      user: created.body as { id: string; username: string; email: string; created_at: string; updated_at: string },
      token: login.body.token as string,
      refresh: login.body.refresh_token as string,
      password,
    };
  }

  async function graphql(query: string, opts: { variables?: Record<string, unknown>; token?: string } = {}) {
    return call("POST", "/graphql", { body: { query, variables: opts.variables }, token: opts.token });
  }

  /** Every log line so far. */
  async function logs(): Promise<string[]> {
    return logLines;
  }

  return { app, store, config, call, signUp, graphql, logs };
}

/** Asserts an RFC 9457 problem with this status and code. */
export function expectProblem(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body?.code, text: reply.text }).toMatchObject({ status, code });
  expect(reply.headers.get("content-type")).toBe("application/problem+json");
  // Plain comparisons: Bun's toMatchObject writes asymmetric matchers into the object it inspects.
  const { type, title, detail } = reply.body;
  expect({ type, status: reply.body.status, title: typeof title, detail: typeof detail }).toEqual({
    type: "about:blank",
    status,
    title: "string",
    detail: "string",
  });
}

/** Makes the user an administrator, as `svc user promote` does on the box. */
export async function promote(store: Pick<Store, "users">, userId: string): Promise<void> {
  const event = auditEvent("admin.user.updated", { target: userId, origin: CLI_ORIGIN });
  await store.users.administer(userId, { role: "admin" }, new Date().toISOString(), event);
}
