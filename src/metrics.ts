// Prometheus metrics (prom-client): requests by route and status, GraphQL operations by name and
// outcome, failed and throttled logins, the database pool, and the process's own figures.
import { Elysia } from "elysia";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Store } from "./db/store.ts";

export type GraphqlOutcome = "ok" | "error" | "invalid";

export interface Metrics {
  registry: Registry;
  request(method: string, route: string, status: number, seconds: number): void;
  graphqlOperation(operation: string, outcome: GraphqlOutcome): void;
}

const LOGIN_ROUTE = "/svc-api/v1/auth/login";

export function createMetrics(store: Store): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: "svc" });
  collectDefaultMetrics({ register: registry, prefix: "svc_" });

  const requests = new Counter({ name: "svc_http_requests_total", help: "HTTP requests by method, route and status.", labelNames: ["method", "route", "status"], registers: [registry] });
  const duration = new Histogram({
    name: "svc_http_request_duration_seconds",
    help: "HTTP request duration by method, route and status.",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const operations = new Counter({ name: "svc_graphql_operations_total", help: "GraphQL operations by name and outcome (ok, error, invalid).", labelNames: ["operation", "outcome"], registers: [registry] });
  const failedLogins = new Counter({ name: "svc_login_failures_total", help: "Logins refused for a wrong username or password.", registers: [registry] });
  const throttledLogins = new Counter({ name: "svc_login_throttled_total", help: "Logins refused because the account or client was blocked.", registers: [registry] });
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

  // prom-client hashes a label object on every call; one child per label set, found by a plain key,
  // keeps the per-request cost to a Map lookup.
  const children = new Map<string, { count: { inc(): void }; time: { observe(value: number): void } }>();

  return {
    registry,
    request(method, route, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let child = children.get(key);
      if (!child) {
        const labels = { method, route, status: String(status) };
        child = { count: requests.labels(labels), time: duration.labels(labels) };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(seconds);
      if (route === LOGIN_ROUTE && status === 401) failedLogins.inc();
      if (route === LOGIN_ROUTE && status === 429) throttledLogins.inc();
    },
    graphqlOperation(operation, outcome) {
      operations.inc({ operation, outcome });
    },
  };
}

/** GET /svc/metrics in Prometheus' text format. */
export function metricsRoutes(metrics: Metrics) {
  return new Elysia({ name: "svc/metrics" }).get("/svc/metrics", async () => {
    return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
  });
}
