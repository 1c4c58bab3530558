// The mail outbox, newest first (filtered by state, older pages by `before` through the Link svc sends): who each
// mail is to, what it is, how its delivery fares, and "Resend" on one given up on. Never a body: svc sends none,
// as bodies hold one-time tokens. Where mail is off, svc's answer says how to turn it on.
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { anyOr, SelectField, submitted, useField } from "./forms.tsx";
import { Outcome, useReported } from "./outcome.tsx";
import { Pager, usePagedList } from "./paging.tsx";
import { useAction, When } from "./parts.tsx";
import { Table, type TableWords } from "./table.tsx";

type OutboxMail = components["schemas"]["OutboxMail"];

const STATES = anyOr(["pending", "sent", "failed"]);
const KINDS: Record<OutboxMail["kind"], string> = {
  verify_email: "address verification",
  password_reset: "password reset",
  password_changed: "password changed",
  email_change: "address change",
  email_changed: "address changed",
};
const PAGE = 50;
const TABLE: TableWords = {
  caption: "Mails, newest first",
  columns: ["To", "Kind", "Subject", "State", "Attempts", "Last error", "Written", "Next attempt", "Sent", "Actions"],
  empty: "No mails.",
};

const firstPage = (status: string) =>
  `/admin/mail?${new URLSearchParams({ limit: String(PAGE), ...(status && { status }) })}`;

export function MailView() {
  const status = useField("");
  const action = useAction();
  const list = usePagedList<OutboxMail>(action, firstPage(""), "mail_not_configured");
  const reported = useReported(action, () => list.load(list.current));

  const resend = (mail: OutboxMail) =>
    reported.act(`The mail to ${mail.recipient} is pending again`, () =>
      request<OutboxMail>("POST", `/admin/mail/${mail.id}/resend`),
    );

  return (
    <section aria-labelledby="mail-title">
      <h2 id="mail-title">Mail</h2>
      <p class="muted">
        The outbox: mails waiting to be sent or retried, sent, and given up on after a day of failed attempts.
      </p>
      {list.off !== null && <p role="status">{list.off}</p>}
      <form
        class="filters"
        role="search"
        aria-label="Mails"
        onSubmit={submitted(() => {
          reported.say("");
          // A new search, even with the same state: the first page read afresh.
          const first = firstPage(status.value);
          if (!list.turning.canGoBack && list.current === first) void list.load(first);
          else list.restart(first);
        })}
      >
        <SelectField label="State" name="mail-status" options={STATES} {...status} />
        <button type="submit">Show</button>
      </form>
      <Outcome error={action.error} done={reported.done} />
      <Table {...TABLE} rows={list.rows} settled={!action.busy && list.off === null}>
        {(mail) => (
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
        )}
      </Table>
      <Pager label="Pages of mails" back="Newer" forth="Older" turning={list.turning} />
    </section>
  );
}
