// The sign-in form: only administrators get in.
import { useState } from "preact/hooks";
import { signIn, type Me } from "./api.ts";
import { ForgotPassword } from "./forgot-password.tsx";
import { ErrorNote, Field, useAction } from "./parts.tsx";

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();
  const [forgot, setForgot] = useState(false);
  if (forgot)
    return (
      <main class="sign-in">
        <h1>svc admin</h1>
        <ForgotPassword onDone={() => setForgot(false)} />
      </main>
    );
  return (
    <main class="sign-in">
      <h1>svc admin</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => onSignedIn(await signIn(username, password)));
        }}
      >
        <Field label="Username or e-mail">
          <input
            name="username"
            autoComplete="username"
            required
            value={username}
            onInput={(e) => setUsername(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password">
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
        <ErrorNote error={action.error} />
        <button type="button" class="link" onClick={() => setForgot(true)}>
          Forgot password?
        </button>
      </form>
    </main>
  );
}
