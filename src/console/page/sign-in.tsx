// The sign-in form: only administrators get in. A password, then (for an account with a second factor) a
// code from the authenticator app, a recovery code or a passkey; or a passkey alone; or an OpenID provider,
// whose sign-in comes back signed in, or at the second step (in the address's fragment, taken by api.ts).
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  arrivedSecondStep,
  type OidcProvider,
  providers,
  secondStep,
  signIn,
  signInWith,
  signInWithPasskey,
  type Me,
  type MfaChallenge,
} from "./api.ts";
import { ForgotPassword } from "./forgot-password.tsx";
import { CodeField, Submit, submitted, TextField } from "./forms.tsx";
import { ErrorNote, useAction } from "./parts.tsx";

/** The page shown while no one is signed in, whichever of its forms it holds. */
function SignInPage({ children }: { children: ComponentChildren }) {
  return (
    <main class="sign-in">
      <h1>svc admin</h1>
      {children}
    </main>
  );
}

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [challenge, setChallenge] = useState<MfaChallenge | null>(arrivedSecondStep);
  const action = useAction();
  const [forgot, setForgot] = useState(false);
  const [offered, setOffered] = useState<OidcProvider[]>([]);
  useEffect(() => {
    void providers().then(setOffered);
  }, []);
  if (forgot)
    return (
      <SignInPage>
        <ForgotPassword onDone={() => setForgot(false)} />
      </SignInPage>
    );
  if (challenge)
    return (
      <SignInPage>
        <SecondStep challenge={challenge} onSignedIn={onSignedIn} onCancel={() => setChallenge(null)} />
      </SignInPage>
    );
  return (
    <SignInPage>
      <form
        onSubmit={submitted(() =>
          action.run(async () => {
            const answer = await signIn(username, password);
            if ("mfaRequired" in answer) {
              setPassword("");
              setChallenge(answer);
            } else onSignedIn(answer);
          }),
        )}
      >
        <TextField
          label="Username or e-mail"
          name="username"
          autoComplete="username"
          required
          value={username}
          set={setUsername}
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          set={setPassword}
        />
        <Submit busy={action.busy}>Sign in</Submit>
        <ErrorNote error={action.error} />
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void action.run(async () => onSignedIn(await signInWithPasskey()))}
        >
          Sign in with a passkey
        </button>
        {offered.map((provider) => (
          <button key={provider.name} type="button" disabled={action.busy} onClick={() => signInWith(provider.name)}>
            Sign in with {provider.label}
          </button>
        ))}
        <button type="button" class="link" onClick={() => setForgot(true)}>
          Forgot password?
        </button>
      </form>
    </SignInPage>
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
      onSubmit={submitted(() => {
        const proof = recovery ? { recoveryCode: code } : { code };
        return action.run(async () => onSignedIn(await secondStep(challenge, proof)));
      })}
    >
      <h2>Second step</h2>
      {!typed ? null : recovery ? (
        <TextField label="Recovery code" name="recovery-code" autoComplete="off" required value={code} set={setCode} />
      ) : (
        <CodeField label="Code" name="code" pattern="[0-9 ]*" value={code} set={setCode} />
      )}
      {typed && <Submit busy={action.busy}>Verify</Submit>}
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
