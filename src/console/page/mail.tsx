// The mail outbox, newest first (filtered by state, older pages by `before` through the Link svc sends): who each
// mail is to, what it is, how its delivery fares, and "Resend" on one given up on. Never a body: svc sends none,
// as bodies hold one-time tokens. Where mail is off, svc's answer says how to turn it on.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { ApiError, request } from "./api.ts";
import { ErrorNote, Field, useAction, When } from "./parts.tsx";

type OutboxMail = components["schemas"]["OutboxMail"];

const STATES: Array<[string, string]> = [
  ["", "any"],
  ["pending", "pending"],
  ["sent", "sent"],
  ["failed", "failed"],
];
const KINDS: Record<OutboxMail["kind"], string> = {
  verify_email: "address verification",
  password_reset: "password reset",
  password_changed: "password changed",
  email_change: "address change",
  email_changed: "address changed",
};
const PAGE = 50;

const firstPage = (status: string) =>
  `/admin/mail?${new URLSearchParams({ limit: String(PAGE), ...(status && { status }) })}`;

export function MailView() {
  const [status, setStatus] = useState("");
  const [pages, setPages] = useState<string[]>([firstPage("")]);
  const [rows, setRows] = useState<OutboxMail[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [off, setOff] = useState<string | null>(null);
  const [done, setDone] = useState("");
  const action = useAction();
  const current = pages.at(-1)!;

  const load = (url: string) =>
    action.run(async () => {
      try {
        const answer = await request<OutboxMail[]>("GET", url);
        setRows(answer.body);
        setNext(answer.next);
        setOff(null);
      } catch (error) {
        if (error instanceof ApiError && error.code === "mail_not_configured") setOff(error.detail);
        else throw error;
      }
    });
  useEffect(() => {
    void load(current);
  }, [current]);

  async function resend(mail: OutboxMail) {
    setDone("");
    const sent = await action.run(() => request<OutboxMail>("POST", `/admin/mail/${mail.id}/resend`));
    if (!sent) return;
    setDone(`The mail to ${mail.recipient} is pending again`);
    await load(current);
  }

  return (
    <section aria-labelledby="mail-title">
      <h2 id="mail-title">Mail</h2>
      <p class="muted">
        The outbox: mails waiting to be sent or retried, sent, and given up on after a day of failed attempts.
      </p>
      {off !== null && <p role="status">{off}</p>}
      <form
        class="filters"
        role="search"
        aria-label="Mails"
        onSubmit={(event) => {
          event.preventDefault();
          setDone("");
          // A new search, even with the same state: the first page read afresh.
          const first = firstPage(status);
          if (pages.length === 1 && current === first) void load(first);
          else setPages([first]);
        }}
      >
        <Field label="State">
          <select name="mail-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            {STATES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={action.error} />
      <p class="done" role="status">
        {done}
      </p>
      <div class="table">
        <table>
          <caption class="visually-hidden">Mails, newest first</caption>
          <thead>
            <tr>
              <th scope="col">To</th>
              <th scope="col">Kind</th>
              <th scope="col">Subject</th>
              <th scope="col">State</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Written</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Sent</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((mail) => (
              <tr key={mail.id} data-mail={mail.id} data-status={mail.status}>
                <th scope="row">{mail.recipient}</th>
                <td data-label="Kind">{KINDS[mail.kind] ?? mail.kind}</td>
                <td data-label="Subject">{mail.subject}</td>
                <td data-label="State">
                  <span class={`badge ${mail.status}`}>{mail.status}</span>
                </td>
                <td data-label="Attempts">{mail.attempts}</td>
                <td data-label="Last error">{mail.last_error ?? <span class="muted">none</span>}</td>
                <td data-label="Written">
                  <When at={mail.created_at} />
                </td>
                <td data-label="Next attempt">
                  {mail.status === "pending" ? <When at={mail.next_attempt_at} /> : <span class="muted">—</span>}
                </td>
                <td data-label="Sent">
                  <When at={mail.sent_at} />
                </td>
                <td class="actions">
                  {mail.status === "failed" && (
                    <button
                      type="button"
                      disabled={action.busy}
                      aria-label={`Resend the mail to ${mail.recipient}`}
                      onClick={() => void resend(mail)}
                    >
                      Resend
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && off === null && !action.busy && <p class="muted">No mails.</p>}
      <nav class="pager" aria-label="Pages of mails">
        <button type="button" disabled={pages.length < 2} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!next} onClick={() => next && setPages([...pages, next])}>
          Older
        </button>
      </nav>
    </section>
  );
}
