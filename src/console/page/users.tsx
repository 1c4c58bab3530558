// Accounts: make one (new-account.tsx), find (search, status, role), page through, and act on one: disable
// or enable, promote or demote, mark the e-mail address verified, issue a reset code (shown once), clear
// the second factors (a lost phone) or delete after confirming.
import { useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { anyOr, SelectField, submitted, TextField, useField } from "./forms.tsx";
import { type Issued, IssuedCode } from "./issued-code.tsx";
import { NewAccount } from "./new-account.tsx";
import { Outcome, useReported } from "./outcome.tsx";
import { Pager, usePagedList } from "./paging.tsx";
import { ConfirmButton, useAction, When } from "./parts.tsx";
import { Table, type TableWords } from "./table.tsx";

/** An account as the admin routes show it (the OpenAPI document's AdminUser). */
type Account = components["schemas"]["AdminUser"];

type IssuedReset = components["schemas"]["IssuedReset"];

const PAGE = 20;
const STATUSES = anyOr(["active", "disabled"]);
const ROLES = anyOr(["user", "admin"]);
const TABLE: TableWords = {
  caption: "Accounts",
  columns: ["Username", "E-mail", "Role", "Status", "Last login", "Actions"],
  empty: "No accounts match.",
};

export function Users({ me }: { me: { id: string } }) {
  const search = useField("");
  const status = useField("");
  const role = useField("");
  const [issued, setIssued] = useState<Issued | null>(null);
  const action = useAction();

  const first = () => {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (search.value) query.set("search", search.value);
    if (status.value) query.set("status", status.value);
    if (role.value) query.set("role", role.value);
    return `/admin/users?${query}`;
  };
  // Until the first search, the first page follows the filters as they change.
  const list = usePagedList<Account>(action, first());
  const reported = useReported(action, () => list.load(list.current));

  function act(what: string, work: () => Promise<unknown>) {
    setIssued(null);
    return reported.act(what, work);
  }
  const change = (account: Account, patch: Partial<Account>, what: string) =>
    act(what, () => request("PATCH", `/admin/users/${account.id}`, patch));

  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <NewAccount
        onCreated={(account) => {
          setIssued(null);
          reported.say(`${account.username} created (${account.role})`);
          void list.load(list.current);
        }}
      />
      <form class="filters" role="search" onSubmit={submitted(() => list.restart(first()))}>
        <TextField label="Search (start of username or e-mail)" name="search" type="search" {...search} />
        <SelectField label="Status" name="status" options={STATUSES} {...status} />
        <SelectField label="Role" name="role" options={ROLES} {...role} />
        <button type="submit">Find</button>
      </form>
      <Outcome error={action.error} done={reported.done} />
      <IssuedCode kind="Reset code" issued={issued} onDone={() => setIssued(null)} />
      <Table {...TABLE} rows={list.rows} settled={!action.busy}>
        {(account) => (
          <tr key={account.id} data-user={account.username}>
            <th scope="row">{account.username}</th>
            <td data-label="E-mail">
              {account.email}{" "}
              <span class={`badge ${account.email_verified ? "verified" : "unverified"}`}>
                {account.email_verified ? "verified" : "unverified"}
              </span>
            </td>
            <td data-label="Role">{account.role}</td>
            <td data-label="Status">
              <span class={`badge ${account.status}`}>{account.status}</span>
            </td>
            <td data-label="Last login">
              <When at={account.last_login_at} />
            </td>
            <td class="actions">
              {account.status === "active" ? (
                <button
                  type="button"
                  onClick={() => change(account, { status: "disabled" }, `${account.username} disabled`)}
                >
                  Disable
                </button>
              ) : (
                <button
                  type="button"
                  onClick={() => change(account, { status: "active" }, `${account.username} enabled`)}
                >
                  Enable
                </button>
              )}
              {account.role === "user" ? (
                <button
                  type="button"
                  onClick={() => change(account, { role: "admin" }, `${account.username} is an administrator`)}
                >
                  Promote
                </button>
              ) : (
                <button
                  type="button"
                  onClick={() => change(account, { role: "user" }, `${account.username} is a user`)}
                >
                  Demote
                </button>
              )}
              {!account.email_verified && (
                <button
                  type="button"
                  onClick={() =>
                    act(`${account.username}'s e-mail address marked verified`, () =>
                      request("POST", `/admin/users/${account.id}/email-verified`),
                    )
                  }
                >
                  Mark verified
                </button>
              )}
              <button
                type="button"
                onClick={() =>
                  act(`Reset code issued for ${account.username}`, async () => {
                    const { body } = await request<IssuedReset>("POST", `/admin/users/${account.id}/password-reset`);
                    setIssued({ whom: account.username, code: body.reset_code, expiresAt: body.expires_at });
                  })
                }
              >
                Reset code
              </button>
              <ConfirmButton
                label="Clear second factors"
                question={`Clear ${account.username}'s authenticator app, recovery codes and passkeys?`}
                onConfirm={() =>
                  void act(`${account.username}'s second factors cleared`, () =>
                    request("DELETE", `/admin/users/${account.id}/mfa`),
                  )
                }
              />
              {account.id !== me.id && (
                <ConfirmButton
                  label="Delete"
                  question={`Delete ${account.username}?`}
                  onConfirm={() =>
                    void act(`${account.username} deleted`, () => request("DELETE", `/admin/users/${account.id}`))
                  }
                />
              )}
            </td>
          </tr>
        )}
      </Table>
      <Pager label="Pages of accounts" back="Previous page" forth="Next page" turning={list.turning} />
    </section>
  );
}
