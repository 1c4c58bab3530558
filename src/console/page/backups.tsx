// Backups (SQLite with SVC_BACKUP_TO): the schedule and how it fares, the snapshots at the target newest first,
// and "Back up now". Where backups are not configured, says how to turn them on.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { ErrorNote, useAction, useLatest, When } from "./parts.tsx";
import { Table } from "./table.tsx";
import { unlessTurnedOff } from "./turned-off.ts";

type Backups = components["schemas"]["Backups"];

/** While a run is on, the view asks again this often, to show how it ends. */
const RUNNING_POLL_MS = 1000;

function size(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function BackupsView() {
  const [backups, setBackups] = useState<Backups | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const action = useAction();

  const only = useLatest();

  const load = () =>
    action.run(() =>
      only(async (read) => {
        const missing = await unlessTurnedOff("backups_not_configured", async () => {
          const answer = (await request<Backups>("GET", "/admin/backups")).body;
          if (read.latest()) setBackups(answer);
        });
        if (read.latest()) setMissing(missing);
      }),
    );
  useEffect(() => {
    void load();
  }, []);
  useEffect(() => {
    if (!backups?.running) return;
    const timer = setTimeout(() => void load(), RUNNING_POLL_MS);
    return () => clearTimeout(timer);
  }, [backups]);

  // Its answer is newer than any read on its way.
  const now = () =>
    action.run(() =>
      only(async (read) => {
        const started = (await request<Backups>("POST", "/admin/backups")).body;
        if (read.latest()) setBackups(started);
      }),
    );

  return (
    <section aria-labelledby="backups-title">
      <h2 id="backups-title">Backups</h2>
      {missing !== null && (
        <p role="status">
          Backups are not configured: {missing} Set <code>SVC_BACKUP_TO</code> (and <code>SVC_BACKUP_EVERY</code> for a
          schedule).
        </p>
      )}
      <ErrorNote error={action.error} />
      {backups && (
        <>
          <dl class="facts">
            <dt>Schedule</dt>
            <dd>{backups.schedule.every ? `every ${backups.schedule.every}` : "only when asked"}</dd>
            <dt>Stored at</dt>
            <dd>
              <code>{backups.schedule.to}</code>, the newest {backups.schedule.keep} kept
            </dd>
            <dt>Status</dt>
            <dd>{backups.running ? "running…" : backups.status}</dd>
            <dt>Last success</dt>
            <dd>
              <When at={backups.last_success_at} />
            </dd>
            <dt>Last failure</dt>
            <dd>
              {backups.last_failure ? (
                <>
                  <When at={backups.last_failure.at} />: {backups.last_failure.reason}
                </>
              ) : (
                <span class="muted">none</span>
              )}
            </dd>
          </dl>
          <p>
            <button type="button" disabled={action.busy || backups.running} onClick={() => void now()}>
              {backups.running ? "Backing up…" : "Back up now"}
            </button>
          </p>
          {backups.listing_error && <p role="alert">The snapshots could not be listed: {backups.listing_error}</p>}
          <Table caption="Snapshots" columns={["Snapshot", "Taken", "Size", "svc"]} rows={backups.snapshots ?? []}>
            {(snapshot) => (
              <tr key={snapshot.name}>
                <td>
                  <code>{snapshot.name}</code>
                </td>
                <td>
                  <When at={snapshot.created_at} />
                </td>
                <td>{size(snapshot.size)}</td>
                <td>{snapshot.version}</td>
              </tr>
            )}
          </Table>
        </>
      )}
    </section>
  );
}
