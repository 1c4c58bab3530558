// The series svc counts on every request, kept by hand so that counting costs a Map lookup and an
// addition; prom-client sees them only when someone scrapes.
import { computed } from "./process-metrics.ts";

/** A counter with labels: one series per label set, exposed in the order each was declared or first counted. */
export class LabelledCounter<L extends string> {
  private readonly series = new Map<string, { labels: Record<L, string>; value: number }>();

  /** Exposes the series for `labels` at 0 until it is counted; `key` finds it (the labels' values, as one string). */
  declare(labels: Record<L, string>, key: string): void {
    if (!this.series.has(key)) this.series.set(key, { labels, value: 0 });
  }

  has(key: string): boolean {
    return this.series.has(key);
  }

  /** Counts one for `labels`, whose series is found by `key`. */
  inc(labels: Record<L, string>, key: string): void {
    const series = this.series.get(key);
    if (series) series.value++;
    else this.series.set(key, { labels, value: 1 });
  }

  readonly values = () => [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
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
 * its own metric format. prom-client hashes the label object on every observe(), even through a
 * child; here a request is a Map lookup and two additions, and the labels are turned into samples
 * only when someone scrapes.
 */
export class RequestMetrics {
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
