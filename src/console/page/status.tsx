// The status strip: health, version, environment and database, from /svc/health (the client's health()), every
// 30 s. Anything but svc's health answer (no answer, a proxy's page in its place) reads as "svc does not answer".
import { useEffect, useState } from "preact/hooks";
import type { Health } from "@svc/client";
import { client } from "./api.ts";

const EVERY_MS = 30_000;

export function Status() {
  /** svc's health as last read; null once a read got no health answer; undefined before the first. */
  const [health, setHealth] = useState<Health | null | undefined>(undefined);
  useEffect(() => {
    let asked = 0;
    /** The latest read whose outcome is shown: an earlier read's, arriving after it, is not. */
    let shown = 0;
    /** Ends the read on its way when the strip goes (a sign-out). */
    const leaving = new AbortController();
    const read = async () => {
      const mine = ++asked;
      const answer = await client.health({ signal: leaving.signal }).catch(() => null);
      if (leaving.signal.aborted || mine < shown) return;
      shown = mine;
      setHealth(answer);
    };
    void read();
    const timer = setInterval(read, EVERY_MS);
    return () => {
      clearInterval(timer);
      leaving.abort();
    };
  }, []);
  if (health === null) return <p class="status unavailable">svc does not answer</p>;
  if (health === undefined) return null;
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
