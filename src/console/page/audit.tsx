// The audit log, newest first: filtered by action, user (by name, e-mail or id) and time.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { ApiError, request } from "./api.ts";
import { anyOr, SelectField, submitted, TextField, useField } from "./forms.tsx";
import type { Names } from "./names.ts";
import { Pager, type Turning, useListPage } from "./paging.tsx";
import { ErrorNote, useAction, When } from "./parts.tsx";
import { Table, type TableWords } from "./table.tsx";
import { AUDIT_ACTIONS as ACTIONS } from "../../audit/actions.ts";

type AuditEvent = components["schemas"]["AuditEvent"];

const PERIODS: Array<[string, string]> = [
  ["1h", "last hour"],
  ["24h", "last 24 hours"],
  ["7d", "last 7 days"],
  ["30d", "last 30 days"],
  ["", "any time"],
];
const ACTION_CHOICES = anyOr(ACTIONS);
const TABLE: TableWords = {
  caption: "Audit events, newest first",
  columns: ["When", "Action", "Outcome", "By", "On", "From", "Detail"],
  empty: "No events match.",
};
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
  const action = useField("");
  const user = useField("");
  const since = useField("24h");
  /** The page shown: null for the first of the filters as they are. */
  const [url, setUrl] = useState<string | null>(null);
  const loading = useAction();

  async function firstPage(): Promise<string> {
    const query = new URLSearchParams({ limit: "50" });
    if (action.value) query.set("action", action.value);
    if (since.value) query.set("since", since.value);
    if (user.value.trim()) query.set("user", await userId(user.value.trim()));
    return `/admin/audit?${query}`;
  }
  const page = useListPage<AuditEvent, string | null>(loading, url, (target) => target ?? firstPage());
  const turning: Turning = { canGoBack: url !== null, back: () => setUrl(null), next: page.next, forth: setUrl };

  useEffect(() => names.want(page.rows.flatMap((row) => [row.actor_id, row.target_id])), [page.rows, names]);

  const who = (id: string | null) => (id ? names.of(id) : "—");
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <form
        class="filters"
        role="search"
        onSubmit={submitted(() => {
          // A new search, even with the same filters: the first page is read with them afresh.
          if (url === null) void page.load(null);
          else setUrl(null);
        })}
      >
        <SelectField label="Action" name="action" options={ACTION_CHOICES} {...action} />
        <TextField label="User (username, e-mail or id)" name="user" {...user} />
        <SelectField label="Time" name="since" options={PERIODS} {...since} />
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={loading.error} />
      <Table {...TABLE} rows={page.rows} settled={!loading.busy}>
        {(event) => (
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
        )}
      </Table>
      <Pager label="Pages of events" back="Newest" forth="Older" turning={turning} />
    </section>
  );
}
