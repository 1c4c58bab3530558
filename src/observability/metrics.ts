// Prometheus metrics: requests by route and status, GraphQL operations by name and outcome, failed
// and throttled logins, the database pool, and the process's own figures. svc counts them itself;
// prom-client, which turns them into Prometheus' text format, is loaded by the first scrape: loaded
// with the app, it held memory that a box nobody scrapes never needs (docs/performance.md, "Footprint").
import { Elysia } from "elysia";
import type { Metric, Registry } from "prom-client";
import type { Store } from "../db/store.ts";
import type { AppError } from "../errors/index.ts";
import { LabelledCounter, RequestMetrics } from "./metric-series.ts";
import { computed, processMetrics, unlabelled } from "./process-metrics.ts";

export type GraphqlOutcome = "ok" | "error" | "invalid";

/** How a second factor was shown (docs/second-factors.md), and whether it held. */
export const MFA_METHODS = ["totp", "recovery_code", "webauthn"] as const;
export type MfaMethod = (typeof MFA_METHODS)[number];
export type MfaOutcome = "success" | "failure";
/** What counts second-factor checks: the factor code's and the passkey code's alike. */
export type MfaVerificationCounter = (method: MfaMethod, outcome: MfaOutcome) => void;

export interface Metrics {
  /** Every metric in Prometheus' text format, and its content type. */
  exposition(): Promise<{ text: string; contentType: string }>;
  request(method: string, route: string, status: number, seconds: number): void;
  graphqlOperation(operation: string, outcome: GraphqlOutcome): void;
  /** Where svc_graphql_cache_entries reads the GraphQL caches' sizes from. */
  reportCaches(sizes: () => Record<string, number>): void;
  /** Where svc_subscriptions_open reads the open subscriptions, by transport, from. */
  reportSubscriptions(counts: () => Record<string, number>): void;
  /** Category events handed to subscribers' transports. */
  subscriptionEventsSent(count: number): void;
  /** A subscription ended by svc: too slow a reader, or a token no longer valid. */
  subscriptionDropped(reason: (typeof DROP_REASONS)[number]): void;
  /** Where the backup metrics are read from; without it (no SVC_BACKUP_TO) they are not exposed. */
  reportBackups(read: () => BackupFigures): void;
  /** Where the mail sender's figures are read from; without it (mail off) the mail metrics are not exposed. */
  reportMail(read: () => { sent: number; failures: number } | undefined): void;
  /** Where the certificate in use is read from; without it (no SVC_TLS_CERT) its expiry is not exposed. */
  reportCertificate(read: () => { notAfter: string }): void;
  /** A second factor checked (a login's second step or a step-up): svc_mfa_verifications_total. */
  mfaVerification: MfaVerificationCounter;
}

/** What the backup metrics expose (src/backup/service.ts keeps it). */
export interface BackupFigures {
  /** When the newest snapshot stored was taken, in seconds since the epoch; 0: none yet. */
  lastSuccessSeconds: number;
  /** Runs and retries that failed to store a snapshot, since svc started. */
  failures: number;
}

const LOGIN_ROUTE = "/svc-api/v1/auth/login";
/** How long a scrape waits for the database to answer before svc_database_up says 0. */
const PING_TIMEOUT_MS = 2000;
const DROP_REASONS = ["slow", "revoked"] as const;
const OUTCOMES: GraphqlOutcome[] = ["ok", "error", "invalid"];

export function createMetrics(store: Store): Metrics {
  const requests = new RequestMetrics();
  const operations = new LabelledCounter<"operation" | "outcome">();
  const dropped = new LabelledCounter<"reason">();
  // Every known label value is exposed from the start, at 0: a series that appears only with its first
  // event hides that first increase from rate() and leaves alerts on it with nothing to read.
  for (const reason of DROP_REASONS) dropped.declare({ reason }, reason);
  const mfaChecks = new LabelledCounter<"method" | "outcome">();
  for (const method of MFA_METHODS)
    for (const outcome of ["success", "failure"] as const)
      mfaChecks.declare({ method, outcome }, `${method} ${outcome}`);
  let failedLogins = 0;
  let throttledLogins = 0;
  let eventsSent = 0;
  let cacheSizes: () => Record<string, number> = () => ({});
  let subscriptionCounts: () => Record<string, number> = () => ({});
  const byLabel = (label: string, read: () => Record<string, number>) => () =>
    Object.entries(read()).map(([value, n]) => ({ labels: { [label]: value }, value: n }));

  // In the order they are exposed.
  const all: Metric[] = [
    ...processMetrics(),
    requests.counter,
    requests.histogram,
    computed(
      "svc_graphql_operations_total",
      "GraphQL operations by name and outcome (ok, error, invalid).",
      "counter",
      operations.values,
    ),
    computed(
      "svc_login_failures_total",
      "Logins refused for a wrong username or password.",
      "counter",
      unlabelled(() => failedLogins),
    ),
    computed(
      "svc_login_throttled_total",
      "Logins refused because the account or client was blocked.",
      "counter",
      unlabelled(() => throttledLogins),
    ),
    computed(
      "svc_mfa_verifications_total",
      "Second factors checked (a login's second step or a step-up) by method (totp, recovery_code, webauthn) and outcome (success, failure).",
      "counter",
      mfaChecks.values,
    ),
    computed(
      "svc_storage_full",
      "1 while the database's storage counts as full (a write failed for want of space in the last 5 s, or an SQLite volume has under 1 MiB free): writes answer 503 storage_full, reads go on; else 0.",
      "gauge",
      unlabelled(() => (store.storage() === "full" ? 1 : 0)),
    ),
    computed(
      "svc_db_pool_connections",
      "Database connections: max (the pool's bound), open, and of those busy and idle.",
      "gauge",
      byLabel("state", () => {
        const { max, open, busy } = store.pool();
        return { max, open, busy, idle: open - busy };
      }),
    ),
    // Asked at each scrape (a scrape is rare, and needs a token or the operations listener), not kept
    // from the last health probe: nothing may have probed since. After the pool's figures, which the
    // registry reads first: its ping would otherwise count as a busy connection.
    computed(
      "svc_database_up",
      "1 while the database answers a ping (within 2 s) at the scrape, else 0.",
      "gauge",
      async () => [
        {
          labels: {},
          value: await store.ping(PING_TIMEOUT_MS).then(
            () => 1,
            () => 0,
          ),
        },
      ],
    ),
    // A `database` count that keeps up with the requests means LISTEN is not working (a pooler in the way).
    ...(store.tokenChecks
      ? [
          computed(
            "svc_token_checks_total",
            "Token checks by where they were answered (PostgreSQL): memory, kept right by LISTEN/NOTIFY within SVC_DB_STALENESS, or the database.",
            "counter",
            byLabel("answered", () => ({ ...store.tokenChecks!() })),
          ),
        ]
      : []),
    computed(
      "svc_graphql_cache_entries",
      "Entries in each GraphQL cache (documents, parseErrors, compiled, responses); each has a fixed bound.",
      "gauge",
      byLabel("cache", () => cacheSizes()),
    ),
    computed(
      "svc_subscriptions_open",
      "Open GraphQL subscriptions on this instance, by transport (sse, ws).",
      "gauge",
      byLabel("transport", () => subscriptionCounts()),
    ),
    computed(
      "svc_subscription_events_sent_total",
      "Category events handed to subscribers.",
      "counter",
      unlabelled(() => eventsSent),
    ),
    computed(
      "svc_subscriptions_dropped_total",
      "Subscriptions ended by svc: slow (its reader fell too far behind) or revoked (its token stopped being valid).",
      "counter",
      dropped.values,
    ),
  ];

  let registry: Promise<Registry> | undefined;
  async function load() {
    const { Registry } = await import("prom-client");
    const loaded = new Registry();
    loaded.setDefaultLabels({ service: "svc" });
    for (const metric of all) loaded.registerMetric(metric);
    return loaded;
  }

  return {
    async exposition() {
      const loaded = await (registry ??= load());
      return { text: await loaded.metrics(), contentType: loaded.contentType };
    },
    reportCaches(sizes) {
      cacheSizes = sizes;
    },
    reportSubscriptions(counts) {
      subscriptionCounts = counts;
    },
    subscriptionEventsSent(count) {
      eventsSent += count;
    },
    subscriptionDropped(reason) {
      dropped.inc({ reason }, reason);
    },
    reportBackups(read) {
      // Told as the app is made, before the first scrape builds the registry from `all`.
      all.push(...backupMetrics(read));
    },
    reportMail(read) {
      all.push(...mailMetrics(read, store));
    },
    reportCertificate(read) {
      all.push(
        computed(
          "svc_tls_certificate_expiry_timestamp_seconds",
          "When the certificate svc serves (SVC_TLS_CERT, as last loaded, at start or SIGHUP) expires (Unix time). Alert well before it.",
          "gauge",
          unlabelled(() => Date.parse(read().notAfter) / 1000),
        ),
      );
    },
    request(method, route, status, seconds) {
      requests.observe(method, route, status, seconds);
      if (route === LOGIN_ROUTE && status === 401) failedLogins++;
      if (route === LOGIN_ROUTE && status === 429) throttledLogins++;
    },
    mfaVerification(method, outcome) {
      mfaChecks.inc({ method, outcome }, `${method} ${outcome}`);
    },
    graphqlOperation(operation, outcome) {
      // Operation names are few (operation-metrics.ts caps them), outcomes three. A name is known once
      // it comes, and then all its outcomes are.
      if (!operations.has(`${outcome} ${operation}`)) {
        for (const each of OUTCOMES) operations.declare({ operation, outcome: each }, `${each} ${operation}`);
      }
      operations.inc({ operation, outcome }, `${outcome} ${operation}`);
    },
  };
}

/** The mail metrics, exposed only while mail is on (src/mail/sender.ts counts; the outbox is counted at the scrape). */
function mailMetrics(read: () => { sent: number; failures: number } | undefined, store: Store): Metric[] {
  return [
    computed(
      "svc_mail_sent_total",
      "Mails this instance handed to the SMTP server (or the log) since it started.",
      "counter",
      unlabelled(() => read()?.sent ?? 0),
    ),
    computed(
      "svc_mail_failures_total",
      "Attempts to send a mail that failed on this instance (each retried later, or given up on a day after the mail was written).",
      "counter",
      unlabelled(() => read()?.failures ?? 0),
    ),
    computed(
      "svc_mail_outbox_pending",
      "Mails waiting in the outbox to be sent (all instances).",
      "gauge",
      async () => [{ labels: {}, value: await store.mail.pending().catch(() => Number.NaN) }],
    ),
  ];
}

/** The backup metrics, exposed only where there are backups (SVC_BACKUP_TO). */
function backupMetrics(read: () => BackupFigures): Metric[] {
  return [
    computed(
      "svc_backup_last_success_timestamp_seconds",
      "When the newest of this database's backup snapshots at SVC_BACKUP_TO was taken (Unix time; re-read every minute; none dated in the future); 0: none yet. Alert when it is older than two periods of SVC_BACKUP_EVERY.",
      "gauge",
      unlabelled(() => read().lastSuccessSeconds),
    ),
    computed(
      "svc_backup_failures_total",
      "Backup runs and retries that failed to store a snapshot (each is also a warn line).",
      "counter",
      unlabelled(() => read().failures),
    ),
  ];
}

/**
 * GET /svc/metrics in Prometheus' text format, unless `refusal` names why not (a missing token, a stranger
 * to a production svc: src/http/exposure.ts).
 */
export function metricsRoutes(metrics: Metrics, refusal: (request: Request) => AppError | null) {
  return new Elysia({ name: "svc/metrics" }).get("/svc/metrics", async ({ request }) => {
    const refused = refusal(request);
    if (refused) throw refused;
    const { text, contentType } = await metrics.exposition();
    return new Response(text, { headers: { "content-type": contentType } });
  });
}
