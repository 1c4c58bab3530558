// The process's own figures, as Bun gives them truthfully. prom-client's default set is written for
// Node: under Bun its heap and event-loop lag are not what they say (bench/results.md, "Figures behind the code"), its version is
// Bun's Node-compatibility level, and some of its gauges end in _total.
import { readdirSync } from "node:fs";
import type { Metric } from "prom-client";
import { version } from "../../package.json";

const LAG_SAMPLE_MS = 500;

/** A metric computed when scraped, in prom-client's format (only what the registry reads of it). */
export function computed(
  name: string,
  help: string,
  type: "counter" | "gauge" | "histogram",
  values: () => object[] | Promise<object[]>,
): Metric {
  // The registry reads name, help, type, aggregator and get(); Metric's other members are for callers
  // of a metric, which these have none of (hence the cast).
  return {
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: await values() }),
  } as unknown as Metric;
}

/** The values of a metric without labels, read when scraped. */
export const unlabelled = (read: () => number) => () => [{ labels: {}, value: read() }];

/** The process's metrics; the event loop's lag is sampled from this call on. */
export function processMetrics(): Metric[] {
  const startedAt = Date.now() / 1000 - process.uptime();
  // The longest the event loop was late for a timer since the last scrape.
  let worstLag = 0;
  let expected = performance.now() + LAG_SAMPLE_MS;
  setInterval(() => {
    const now = performance.now();
    worstLag = Math.max(worstLag, (now - expected) / 1000);
    expected = now + LAG_SAMPLE_MS;
  }, LAG_SAMPLE_MS).unref();

  const one = (value: number) => () => [{ labels: {}, value }];
  const metrics = [
    computed("svc_build_info", "svc's version and the Bun that runs it; always 1.", "gauge", () => [
      { labels: { version, bun: Bun.version }, value: 1 },
    ]),
    computed("svc_process_start_time_seconds", "When the process started, in Unix seconds.", "gauge", one(startedAt)),
    computed(
      "svc_process_cpu_user_seconds_total",
      "CPU time spent in user mode.",
      "counter",
      unlabelled(() => process.cpuUsage().user / 1e6),
    ),
    computed(
      "svc_process_cpu_system_seconds_total",
      "CPU time spent in the kernel.",
      "counter",
      unlabelled(() => process.cpuUsage().system / 1e6),
    ),
    computed(
      "svc_process_resident_memory_bytes",
      "Resident memory (RSS).",
      "gauge",
      unlabelled(() => process.memoryUsage().rss),
    ),
    computed(
      "svc_js_heap_used_bytes",
      "JavaScript heap in use (JavaScriptCore).",
      "gauge",
      unlabelled(() => process.memoryUsage().heapUsed),
    ),
    computed(
      "svc_js_heap_size_bytes",
      "JavaScript heap size (JavaScriptCore).",
      "gauge",
      unlabelled(() => process.memoryUsage().heapTotal),
    ),
    computed(
      "svc_event_loop_lag_seconds",
      `The longest delay of a ${LAG_SAMPLE_MS} ms timer since the last scrape.`,
      "gauge",
      () => {
        const lag = Math.max(0, worstLag);
        worstLag = 0;
        return [{ labels: {}, value: lag }];
      },
    ),
  ];
  if (process.platform === "linux") {
    metrics.push(
      computed(
        "svc_process_open_fds",
        "Open file descriptors.",
        "gauge",
        unlabelled(() => readdirSync("/proc/self/fd").length),
      ),
    );
  }
  return metrics;
}
