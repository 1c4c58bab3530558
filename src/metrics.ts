// Prometheus metrics (prom-client): requests by route and status, GraphQL operations by name and
// outcome, failed and throttled logins, the database pool, and the process's own figures.
import { Elysia } from "elysia";
import { Counter, Gauge, Registry } from "prom-client";
import type { Store } from "./db/store.ts";
import { computed, registerProcessMetrics } from "./process-metrics.ts";

export type GraphqlOutcome = "ok" | "error" | "invalid";

export interface Metrics {
  registry: Registry;
  request(method: string, route: string, status: number, seconds: number): void;
  graphqlOperation(operation: string, outcome: GraphqlOutcome): void;
  /** Where svc_graphql_cache_entries reads the GraphQL caches' sizes from. */
  reportCaches(sizes: () => Record<string, number>): void;
  /** Where svc_subscriptions_open reads the open subscriptions, by transport, from. */
  reportSubscriptions(counts: () => Record<string, number>): void;
  /** Category events handed to subscribers' transports. */
  subscriptionEventsSent(count: number): void;
  /** A subscription ended by svc: too slow a reader, or a token no longer valid. */
  subscriptionDropped(reason: "slow" | "revoked"): void;
}

const LOGIN_ROUTE = "/svc-api/v1/auth/login";

export function createMetrics(store: Store): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: "svc" });
  registerProcessMetrics(registry);

  const requests = new RequestMetrics();
  registry.registerMetric(requests.counter);
  registry.registerMetric(requests.histogram);
  const operationCounters = new Map<string, { inc(): void }>();
  const operations = new Counter({
    name: "svc_graphql_operations_total",
    help: "GraphQL operations by name and outcome (ok, error, invalid).",
    labelNames: ["operation", "outcome"],
    registers: [registry],
  });
  const failedLogins = new Counter({
    name: "svc_login_failures_total",
    help: "Logins refused for a wrong username or password.",
    registers: [registry],
  });
  const throttledLogins = new Counter({
    name: "svc_login_throttled_total",
    help: "Logins refused because the account or client was blocked.",
    registers: [registry],
  });
  new Gauge({
    name: "svc_db_pool_connections",
    help: "Database connections: the pool's size, and how many are busy.",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      const { size, busy } = store.pool();
      this.set({ state: "max" }, size);
      this.set({ state: "busy" }, busy);
    },
  });

  let cacheSizes: () => Record<string, number> = () => ({});
  new Gauge({
    name: "svc_graphql_cache_entries",
    help: "Entries in each GraphQL cache (documents, parseErrors, compiled, responses); each has a fixed bound.",
    labelNames: ["cache"],
    registers: [registry],
    collect() {
      for (const [cache, size] of Object.entries(cacheSizes())) this.set({ cache }, size);
    },
  });

  let subscriptionCounts: () => Record<string, number> = () => ({});
  new Gauge({
    name: "svc_subscriptions_open",
    help: "Open GraphQL subscriptions on this instance, by transport (sse, ws).",
    labelNames: ["transport"],
    registers: [registry],
    collect() {
      for (const [transport, open] of Object.entries(subscriptionCounts())) this.set({ transport }, open);
    },
  });
  const eventsSent = new Counter({
    name: "svc_subscription_events_sent_total",
    help: "Category events handed to subscribers.",
    registers: [registry],
  });
  const dropped = new Counter({
    name: "svc_subscriptions_dropped_total",
    help: "Subscriptions ended by svc: slow (its reader fell too far behind) or revoked (its token stopped being valid).",
    labelNames: ["reason"],
    registers: [registry],
  });

  return {
    registry,
    reportCaches(sizes) {
      cacheSizes = sizes;
    },
    reportSubscriptions(counts) {
      subscriptionCounts = counts;
    },
    subscriptionEventsSent(count) {
      eventsSent.inc(count);
    },
    subscriptionDropped(reason) {
      dropped.inc({ reason });
    },
    request(method, route, status, seconds) {
      requests.observe(method, route, status, seconds);
      if (route === LOGIN_ROUTE && status === 401) failedLogins.inc();
      if (route === LOGIN_ROUTE && status === 429) throttledLogins.inc();
    },
    graphqlOperation(operation, outcome) {
      // The labelled child, kept: finding it by labels costs a cached query half again (0.5 µs).
      // Operation names are few (operation-metrics.ts caps them), outcomes three.
      const key = `${outcome} ${operation}`;
      let counter = operationCounters.get(key);
      if (!counter) {
        counter = operations.labels({ operation, outcome });
        operationCounters.set(key, counter);
      }
      counter.inc();
    },
  };
}

/** GET /svc/metrics in Prometheus' text format. */
export function metricsRoutes(metrics: Metrics) {
  return new Elysia({ name: "svc/metrics" }).get("/svc/metrics", async () => {
    return new Response(await metrics.registry.metrics(), {
      headers: { "content-type": metrics.registry.contentType },
    });
  });
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  labels: { method: string; route: string; status: string };
  /** Observations per bucket, not cumulative: `le` sums them when scraped. The last is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * The request counter and duration histogram, kept by hand and handed to prom-client's registry in
 * its own metric format. prom-client hashes the label object on every inc() and observe(), even
 * through a child; here a request is a Map lookup and two additions, and the labels are turned into
 * samples only when someone scrapes.
 */
class RequestMetrics {
  private readonly series: Series[] = [];
  // route → status → method: constant strings and a number as keys, so a request builds no key.
  private readonly index = new Map<string, Map<number, Map<string, Series>>>();

  observe(method: string, route: string, status: number, seconds: number): void {
    let byStatus = this.index.get(route);
    if (!byStatus) this.index.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (!byMethod) byStatus.set(status, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) {
      series = {
        labels: { method, route, status: String(status) },
        buckets: new Array<number>(BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      byMethod.set(method, series);
      this.series.push(series);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    series.buckets[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  readonly counter = computed("svc_http_requests_total", "HTTP requests by method, route and status.", "counter", () =>
    this.series.map((s) => ({ labels: s.labels, value: s.count })),
  );

  readonly histogram = computed(
    "svc_http_request_duration_seconds",
    "HTTP request duration by method, route and status.",
    "histogram",
    () =>
      this.series.flatMap((s) => {
        let cumulative = 0;
        const buckets = s.buckets.map((n, i) => {
          cumulative += n;
          const le = i < BUCKETS.length ? BUCKETS[i]! : "+Inf";
          return {
            metricName: "svc_http_request_duration_seconds_bucket",
            labels: { ...s.labels, le },
            value: cumulative,
          };
        });
        return [
          ...buckets,
          { metricName: "svc_http_request_duration_seconds_sum", labels: s.labels, value: s.sum },
          { metricName: "svc_http_request_duration_seconds_count", labels: s.labels, value: s.count },
        ];
      }),
  );
}
