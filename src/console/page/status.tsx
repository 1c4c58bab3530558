// The status strip: health, version, environment and database, from /svc/health, every 30 s.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";

type Health = components["schemas"]["Health"];

export function Status() {
  const [health, setHealth] = useState<Health | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const read = () =>
      fetch("/svc/health").then(
        async (response) => {
          setHealth((await response.json()) as Health);
          setFailed(false);
        },
        () => setFailed(true),
      );
    void read();
    const timer = setInterval(read, 30_000);
    return () => clearInterval(timer);
  }, []);
  if (failed) return <p class="status unavailable">svc does not answer</p>;
  if (!health) return null;
  return (
    <section class={`status ${health.status}`} aria-label="Service status">
      <span>
        health <strong>{health.status}</strong>
      </span>
      {/* A production svc tells a page on its public listener, away from the box, no more than its status. */}
      {health.version !== undefined && (
        <span>
          version <strong>{health.version}</strong>
        </span>
      )}
      {health.environment !== undefined && (
        <span>
          environment <strong>{health.environment}</strong>
        </span>
      )}
      <span>
        database <strong>{health.database_kind ?? health.checks.database}</strong>
        {health.checks.storage === "full" && " (storage full)"}
      </span>
    </section>
  );
}
