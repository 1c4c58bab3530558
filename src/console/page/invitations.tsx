// Invitations, for sign-up while SVC_SIGNUP=invite: issue one (for an e-mail address or anyone; its code
// shown once, with a copy button), see who issued and who redeemed each, newest first, and revoke one.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { SelectField, Submit, submitted, TextField, useField } from "./forms.tsx";
import { type Issued, IssuedCode } from "./issued-code.tsx";
import type { Names } from "./names.ts";
import { Outcome, useReported } from "./outcome.tsx";
import { Pager, usePagedList } from "./paging.tsx";
import { ConfirmButton, useAction, When } from "./parts.tsx";
import { Table, type TableWords } from "./table.tsx";

type Invitation = components["schemas"]["Invitation"];
type IssuedInvitation = components["schemas"]["IssuedInvitation"];

/** How long a new invitation lasts: svc's default (SVC_INVITATION_TTL), or a duration it reads. */
const LIFETIMES: Array<[string, string]> = [
  ["", "svc's default"],
  ["24h", "1 day"],
  ["7d", "7 days"],
  ["30d", "30 days"],
];
const FIRST = "/admin/invitations?limit=20";
const TABLE: TableWords = {
  caption: "Invitations",
  columns: ["For", "Issued by", "Issued", "Expires", "Used", "Used by", "Actions"],
  empty: "No invitations.",
};

export function Invitations({ names }: { names: Names }) {
  const email = useField("");
  const lifetime = useField("");
  const [issued, setIssued] = useState<Issued | null>(null);
  const action = useAction();
  const list = usePagedList<Invitation>(action, FIRST);
  const reported = useReported(action, () => list.load(list.current));
  useEffect(() => names.want(list.rows.flatMap((row) => [row.created_by, row.used_by])), [list.rows, names]);

  function act(what: string, work: () => Promise<unknown>) {
    setIssued(null);
    return reported.act(what, work);
  }
  const who = (id: string | null, none: string) => (id ? names.of(id) : <span class="muted">{none}</span>);

  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <p class="muted">While svc runs with SVC_SIGNUP=invite, signing up takes one of these codes; each works once.</p>
      <form
        class="filters"
        aria-label="New invitation"
        onSubmit={submitted(() =>
          act("Invitation issued", async () => {
            const [address, expires] = [email.value.trim(), lifetime.value];
            const body = { ...(address && { email: address }), ...(expires && { expires_in: expires }) };
            const made = (await request<IssuedInvitation>("POST", "/admin/invitations", body)).body;
            setIssued({ whom: made.email ?? "anyone", code: made.code, expiresAt: made.expires_at });
            email.set("");
          }),
        )}
      >
        <TextField label="For e-mail (leave empty for anyone)" name="invite-email" type="email" {...email} />
        <SelectField label="Lasts" name="invite-lifetime" options={LIFETIMES} {...lifetime} />
        <Submit busy={action.busy}>Issue invitation</Submit>
      </form>
      <Outcome error={action.error} done={reported.done} />
      <IssuedCode kind="Invitation code" issued={issued} onDone={() => setIssued(null)} />
      <Table {...TABLE} rows={list.rows} settled={!action.busy}>
        {(invitation) => (
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
        )}
      </Table>
      <Pager label="Pages of invitations" back="Previous page" forth="Next page" turning={list.turning} />
    </section>
  );
}
