// Accounts: make one (new-account.tsx), find (search, status, role), page through, and act on one: disable
// or enable, promote or demote, mark the e-mail address verified, issue a reset code (shown once), clear
// the second factors (a lost phone) or delete after confirming.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { NewAccount } from "./new-account.tsx";
import { ConfirmButton, ErrorNote, Field, useAction, When } from "./parts.tsx";

/** An account as the admin routes show it (the OpenAPI document's AdminUser). */
type Account = components["schemas"]["AdminUser"];

interface Issued {
  username: string;
  reset_code: string;
  expires_at: string;
}

const PAGE = 20;

export function Users({ me }: { me: { id: string } }) {
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("");
  const [role, setRole] = useState("");
  /** The page shown: its URL, and those of the pages before it. */
  const [pages, setPages] = useState<string[]>([]);
  const [rows, setRows] = useState<Account[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [done, setDone] = useState("");
  const action = useAction();

  const first = () => {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (search) query.set("search", search);
    if (status) query.set("status", status);
    if (role) query.set("role", role);
    return `/admin/users?${query}`;
  };
  const load = (url: string) =>
    action.run(async () => {
      const answer = await request<Account[]>("GET", url);
      setRows(answer.body);
      setNext(answer.next);
    });

  const current = pages.at(-1) ?? first();
  useEffect(() => {
    void load(current);
  }, [current]);

  async function act(what: string, work: () => Promise<unknown>) {
    setIssued(null);
    setDone("");
    if (await action.run(work)) {
      setDone(what);
      await load(current);
    }
  }
  const change = (account: Account, patch: Partial<Account>, what: string) =>
    act(what, () => request("PATCH", `/admin/users/${account.id}`, patch));

  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <NewAccount
        onCreated={(account) => {
          setIssued(null);
          setDone(`${account.username} created (${account.role})`);
          void load(current);
        }}
      />
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setPages([first()]);
        }}
      >
        <Field label="Search (start of username or e-mail)">
          <input name="search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </Field>
        <Field label="Status">
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="active">active</option>
            <option value="disabled">disabled</option>
          </select>
        </Field>
        <Field label="Role">
          <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="user">user</option>
            <option value="admin">admin</option>
          </select>
        </Field>
        <button type="submit">Find</button>
      </form>
      <ErrorNote error={action.error} />
      <p class="done" role="status">
        {done}
      </p>
      {issued && (
        <div class="issued" role="region" aria-label="Reset code">
          <p>
            Reset code for <strong>{issued.username}</strong>, shown only now. It works once, until{" "}
            <When at={issued.expires_at} />:
          </p>
          <p>
            <code class="code">{issued.reset_code}</code>{" "}
            <button type="button" onClick={() => void navigator.clipboard?.writeText(issued.reset_code)}>
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
          <caption class="visually-hidden">Accounts</caption>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Last login</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((account) => (
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
                        const answer = await request<Omit<Issued, "username">>(
                          "POST",
                          `/admin/users/${account.id}/password-reset`,
                        );
                        setIssued({ ...answer.body, username: account.username });
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
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !action.busy && <p class="muted">No accounts match.</p>}
      <nav class="pager" aria-label="Pages of accounts">
        <button type="button" disabled={pages.length < 2} onClick={() => setPages(pages.slice(0, -1))}>
          Previous page
        </button>
        <button
          type="button"
          disabled={!next}
          onClick={() => next && setPages([...(pages.length ? pages : [current]), next])}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}
