// Invitations, for sign-up while SVC_SIGNUP=invite: issue one (for an e-mail address or anyone; its code
// shown once, with a copy button), see who issued and who redeemed each, newest first, and revoke one.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import type { Names } from "./names.ts";
import { ConfirmButton, ErrorNote, Field, useAction, When } from "./parts.tsx";

type Invitation = components["schemas"]["Invitation"];
type Issued = components["schemas"]["IssuedInvitation"];

/** How long a new invitation lasts: svc's default (SVC_INVITATION_TTL), or a duration it reads. */
const LIFETIMES: Array<[string, string]> = [
  ["", "svc's default"],
  ["24h", "1 day"],
  ["7d", "7 days"],
  ["30d", "30 days"],
];
const FIRST = "/admin/invitations?limit=20";

export function Invitations({ names }: { names: Names }) {
  const [email, setEmail] = useState("");
  const [lifetime, setLifetime] = useState("");
  const [pages, setPages] = useState<string[]>([FIRST]);
  const [rows, setRows] = useState<Invitation[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [done, setDone] = useState("");
  const action = useAction();
  const current = pages.at(-1)!;

  const load = (url: string) =>
    action.run(async () => {
      const answer = await request<Invitation[]>("GET", url);
      setRows(answer.body);
      setNext(answer.next);
    });
  useEffect(() => {
    void load(current);
  }, [current]);
  useEffect(() => names.want(rows.flatMap((row) => [row.created_by, row.used_by])), [rows, names]);

  async function act(what: string, work: () => Promise<unknown>) {
    setIssued(null);
    setDone("");
    if (await action.run(work)) {
      setDone(what);
      await load(current);
    }
  }
  const who = (id: string | null, none: string) => (id ? names.of(id) : <span class="muted">{none}</span>);

  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <p class="muted">While svc runs with SVC_SIGNUP=invite, signing up takes one of these codes; each works once.</p>
      <form
        class="filters"
        aria-label="New invitation"
        onSubmit={(event) => {
          event.preventDefault();
          void act("Invitation issued", async () => {
            const body = { ...(email.trim() && { email: email.trim() }), ...(lifetime && { expires_in: lifetime }) };
            setIssued((await request<Issued>("POST", "/admin/invitations", body)).body);
            setEmail("");
          });
        }}
      >
        <Field label="For e-mail (leave empty for anyone)">
          <input name="invite-email" type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Lasts">
          <select name="invite-lifetime" value={lifetime} onChange={(e) => setLifetime(e.currentTarget.value)}>
            {LIFETIMES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" disabled={action.busy}>
          Issue invitation
        </button>
      </form>
      <ErrorNote error={action.error} />
      <p class="done" role="status">
        {done}
      </p>
      {issued && (
        <div class="issued" role="region" aria-label="Invitation code">
          <p>
            Invitation code for <strong>{issued.email ?? "anyone"}</strong>, shown only now. It works once, until{" "}
            <When at={issued.expires_at} />:
          </p>
          <p>
            <code class="code">{issued.code}</code>{" "}
            <button type="button" onClick={() => void navigator.clipboard?.writeText(issued.code)}>
              Copy code
            </button>{" "}
            <button type="button" onClick={() => setIssued(null)}>
              Done
            </button>
          </p>
        </div>
      )}
      <div class="table">
        <table>
          <caption class="visually-hidden">Invitations</caption>
          <thead>
            <tr>
              <th scope="col">For</th>
              <th scope="col">Issued by</th>
              <th scope="col">Issued</th>
              <th scope="col">Expires</th>
              <th scope="col">Used</th>
              <th scope="col">Used by</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((invitation) => (
              <tr key={invitation.id} data-invitation={invitation.id}>
                <th scope="row">{invitation.email ?? "anyone"}</th>
                <td data-label="Issued by">{who(invitation.created_by, "the command line")}</td>
                <td data-label="Issued">
                  <When at={invitation.created_at} />
                </td>
                <td data-label="Expires">
                  <When at={invitation.expires_at} />
                </td>
                <td data-label="Used">
                  <When at={invitation.used_at} />
                </td>
                <td data-label="Used by">{who(invitation.used_by, "nobody yet")}</td>
                <td class="actions">
                  <ConfirmButton
                    label="Revoke"
                    question={`Revoke the invitation for ${invitation.email ?? "anyone"}?`}
                    onConfirm={() =>
                      void act("Invitation revoked", () => request("DELETE", `/admin/invitations/${invitation.id}`))
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !action.busy && <p class="muted">No invitations.</p>}
      <nav class="pager" aria-label="Pages of invitations">
        <button type="button" disabled={pages.length < 2} onClick={() => setPages(pages.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" disabled={!next} onClick={() => next && setPages([...pages, next])}>
          Next page
        </button>
      </nav>
    </section>
  );
}
