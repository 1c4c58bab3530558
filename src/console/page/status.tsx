// The status strip: health, version, environment and database, from /svc/health, every 30 s.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";

type Health = components["schemas"]["Health"];

export function Status() {
  const [health, setHealth] = useState<Health | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let asked = 0;
    /** The latest read whose outcome is shown: an earlier read's, arriving after it, is not. */
    let shown = 0;
    const read = async () => {
      const mine = ++asked;
      const answer = await healthOf(fetch("/svc/health"));
      if (mine < shown) return;
      shown = mine;
      setHealth(answer);
      setFailed(answer === null);
    };
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

/**
 * svc's health from its answer: 200, or 503 while the database does not answer. Anything else (a proxy's
 * error page, a refused connection, a body that is not a health document) is null: svc does not answer.
 */
async function healthOf(answer: Promise<Response>): Promise<Health | null> {
  try {
    const response = await answer;
    if (response.status !== 200 && response.status !== 503) return null;
    const body = (await response.json()) as Partial<Health> | null;
    return typeof body?.status === "string" && typeof body.checks === "object" && body.checks !== null
      ? (body as Health)
      : null;
  } catch {
    return null;
  }
}
