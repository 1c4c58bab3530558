// The sign-in form: only administrators get in. A password, then (for an account with a second factor) a
// code from the authenticator app, a recovery code or a passkey; or a passkey alone.
import { useState } from "preact/hooks";
import { secondStep, signIn, signInWithPasskey, type Me, type MfaChallenge } from "./api.ts";
import { ForgotPassword } from "./forgot-password.tsx";
import { ErrorNote, Field, useAction } from "./parts.tsx";

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [challenge, setChallenge] = useState<MfaChallenge | null>(null);
  const action = useAction();
  const [forgot, setForgot] = useState(false);
  if (forgot)
    return (
      <main class="sign-in">
        <h1>svc admin</h1>
        <ForgotPassword onDone={() => setForgot(false)} />
      </main>
    );
  if (challenge)
    return (
      <main class="sign-in">
        <h1>svc admin</h1>
        <SecondStep challenge={challenge} onSignedIn={onSignedIn} onCancel={() => setChallenge(null)} />
      </main>
    );
  return (
    <main class="sign-in">
      <h1>svc admin</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            const answer = await signIn(username, password);
            if ("mfaRequired" in answer) {
              setPassword("");
              setChallenge(answer);
            } else onSignedIn(answer);
          });
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
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void action.run(async () => onSignedIn(await signInWithPasskey()))}
        >
          Sign in with a passkey
        </button>
        <button type="button" class="link" onClick={() => setForgot(true)}>
          Forgot password?
        </button>
      </form>
    </main>
  );
}

/** The second step: the app's code, or a recovery code, or one of the account's passkeys. */
function SecondStep({
  challenge,
  onSignedIn,
  onCancel,
}: {
  challenge: MfaChallenge;
  onSignedIn: (me: Me) => void;
  onCancel: () => void;
}) {
  const [recovery, setRecovery] = useState(!challenge.methods.includes("totp"));
  const [code, setCode] = useState("");
  const action = useAction();
  const canRecover = challenge.methods.includes("recovery_code");
  // A passkey-only account has nothing to type.
  const typed = challenge.methods.includes("totp") || canRecover;
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        const proof = recovery ? { recoveryCode: code } : { code };
        void action.run(async () => onSignedIn(await secondStep(challenge, proof)));
      }}
    >
      <h2>Second step</h2>
      {!typed ? null : recovery ? (
        <Field label="Recovery code">
          <input
            name="recovery-code"
            autoComplete="off"
            required
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
        </Field>
      ) : (
        <Field label="Code">
          <input
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9 ]*"
            required
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
        </Field>
      )}
      {typed && (
        <button type="submit" disabled={action.busy}>
          Verify
        </button>
      )}
      <ErrorNote error={action.error} />
      {challenge.methods.includes("webauthn") && challenge.webauthn && (
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void action.run(async () => onSignedIn(await secondStep(challenge, "passkey")))}
        >
          Use a passkey
        </button>
      )}
      {canRecover && challenge.methods.includes("totp") && (
        <button
          type="button"
          class="link"
          onClick={() => {
            setCode("");
            setRecovery(!recovery);
          }}
        >
          {recovery ? "Use the authenticator app" : "Use a recovery code"}
        </button>
      )}
      <button type="button" class="link" onClick={onCancel}>
        Start over
      </button>
    </form>
  );
}
