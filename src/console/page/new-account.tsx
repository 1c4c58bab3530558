// "New account": an administrator makes an account of either role (POST admin/users), whatever
// SVC_SIGNUP says, under the same rules a sign-up meets; svc names any broken one.
import { useState } from "preact/hooks";
import type { components } from "@svc/client";
import { request } from "./api.ts";
import { SelectField, Submit, submitted, TextField } from "./forms.tsx";
import { ErrorNote, useAction } from "./parts.tsx";

type Account = components["schemas"]["AdminUser"];
type Role = Account["role"];

const ROLES: Array<[Role, string]> = [
  ["user", "user"],
  ["admin", "admin"],
];

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
      onSubmit={submitted(() =>
        action.run(async () => {
          const made = await request<Account>("POST", "/admin/users", { username, email, password, role });
          close();
          onCreated(made.body);
        }),
      )}
    >
      <TextField label="Username" name="new-username" required autoComplete="off" value={username} set={setUsername} />
      <TextField
        label="E-mail"
        name="new-email"
        type="email"
        required
        autoComplete="off"
        value={email}
        set={setEmail}
      />
      <TextField
        label="Password (8-128 characters)"
        name="new-password"
        type="password"
        required
        autoComplete="new-password"
        value={password}
        set={setPassword}
      />
      <SelectField label="Role of the account" name="new-role" value={role} set={setRole} options={ROLES} />
      <Submit busy={action.busy}>Create account</Submit>
      <button type="button" onClick={close}>
        Cancel
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
