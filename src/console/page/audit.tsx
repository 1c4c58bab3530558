// The audit log, newest first: filtered by action, user (by name, e-mail or id) and time.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { ApiError, request } from "./api.ts";
import type { Names } from "./names.ts";
import { ErrorNote, Field, useAction, When } from "./parts.tsx";
import { AUDIT_ACTIONS as ACTIONS } from "../../audit/actions.ts";

type AuditEvent = components["schemas"]["AuditEvent"];

const PERIODS: Array<[string, string]> = [
  ["1h", "last hour"],
  ["24h", "last 24 hours"],
  ["7d", "last 7 days"],
  ["30d", "last 30 days"],
  ["", "any time"],
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A user's id from their id, username or e-mail (a deleted user's only by id). */
async function userId(name: string): Promise<string> {
  if (UUID.test(name)) return name;
  const found = await request<Array<{ id: string; username: string; email: string }>>(
    "GET",
    `/admin/users?${new URLSearchParams({ search: name, limit: "50" })}`,
  );
  const wanted = name.toLowerCase();
  const user = found.body.find((u) => u.username.toLowerCase() === wanted || u.email === wanted);
  if (!user) throw new ApiError("Unknown user", `No account is named ${name}.`, 404, "not_found");
  return user.id;
}

export function Audit({ names }: { names: Names }) {
  const [action, setAction] = useState("");
  const [user, setUser] = useState("");
  const [since, setSince] = useState("24h");
  const [url, setUrl] = useState<string | null>(null);
  const [rows, setRows] = useState<AuditEvent[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const loading = useAction();

  async function firstPage(): Promise<string> {
    const query = new URLSearchParams({ limit: "50" });
    if (action) query.set("action", action);
    if (since) query.set("since", since);
    if (user.trim()) query.set("user", await userId(user.trim()));
    return `/admin/audit?${query}`;
  }
  const show = (target: string | null) =>
    loading.run(async () => {
      const answer = await request<AuditEvent[]>("GET", target ?? (await firstPage()));
      setRows(answer.body);
      setNext(answer.next);
    });
  useEffect(() => {
    void show(url);
  }, [url]);

  useEffect(() => names.want(rows.flatMap((row) => [row.actor_id, row.target_id])), [rows, names]);

  const who = (id: string | null) => (id ? names.of(id) : "—");
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          // A new search, even with the same filters: show() reads them afresh.
          if (url === null) void show(null);
          else setUrl(null);
        }}
      >
        <Field label="Action">
          <select name="action" value={action} onChange={(e) => setAction(e.currentTarget.value)}>
            <option value="">any</option>
            {ACTIONS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="User (username, e-mail or id)">
          <input name="user" value={user} onInput={(e) => setUser(e.currentTarget.value)} />
        </Field>
        <Field label="Time">
          <select name="since" value={since} onChange={(e) => setSince(e.currentTarget.value)}>
            {PERIODS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={loading.error} />
      <div class="table">
        <table>
          <caption class="visually-hidden">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Outcome</th>
              <th scope="col">By</th>
              <th scope="col">On</th>
              <th scope="col">From</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((event) => (
              <tr key={event.id} data-action={event.action}>
                <td data-label="When">
                  <When at={event.at} />
                </td>
                <th scope="row">{event.action}</th>
                <td data-label="Outcome">
                  <span class={`badge ${event.outcome}`}>{event.outcome}</span>
                </td>
                <td data-label="By">{who(event.actor_id)}</td>
                <td data-label="On">{who(event.target_id)}</td>
                <td data-label="From">{event.client_address ?? "—"}</td>
                <td data-label="Detail">
                  <code>{event.detail ? JSON.stringify(event.detail) : ""}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !loading.busy && <p class="muted">No events match.</p>}
      <nav class="pager" aria-label="Pages of events">
        <button type="button" disabled={url === null} onClick={() => setUrl(null)}>
          Newest
        </button>
        <button type="button" disabled={!next} onClick={() => setUrl(next)}>
          Older
        </button>
      </nav>
    </section>
  );
}
