// "New account": an administrator makes an account of either role (POST admin/users), whatever
// SVC_SIGNUP says, under the same rules a sign-up meets; svc names any broken one.
import { useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { ErrorNote, Field, useAction } from "./parts.tsx";

type Account = components["schemas"]["AdminUser"];
type Role = Account["role"];

export function NewAccount({ onCreated }: { onCreated: (account: Account) => void }) {
  const [open, setOpen] = useState(false);
  const [username, setUsername] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("user");
  const action = useAction();

  const close = () => {
    setOpen(false);
    setUsername("");
    setEmail("");
    setPassword("");
    setRole("user");
    action.clear();
  };

  if (!open)
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          New account
        </button>
      </p>
    );
  return (
    <form
      class="new-account"
      aria-label="New account"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const made = await request<Account>("POST", "/admin/users", { username, email, password, role });
          close();
          onCreated(made.body);
        });
      }}
    >
      <Field label="Username">
        <input
          name="new-username"
          required
          autoComplete="off"
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
      </Field>
      <Field label="E-mail">
        <input
          name="new-email"
          type="email"
          required
          autoComplete="off"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field label="Password (8-128 characters)">
        <input
          name="new-password"
          type="password"
          required
          autoComplete="new-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </Field>
      <Field label="Role of the account">
        <select name="new-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          <option value="user">user</option>
          <option value="admin">admin</option>
        </select>
      </Field>
      <button type="submit" disabled={action.busy}>
        Create account
      </button>
      <button type="button" onClick={close}>
        Cancel
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
