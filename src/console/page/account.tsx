// Your own account: its second factors (docs/second-factors.md) and the sign-ins linked to it (docs/oidc.md).
// An authenticator app (enrolled by its QR code, turned on by a first code, which shows the ten recovery codes
// once) and passkeys (made by the browser through @simplewebauthn/browser). Removing a passkey may need a
// step-up first: a current code or a passkey, asked for when svc says so.
import { startRegistration } from "@simplewebauthn/browser";
import type { MfaStatus, Passkey, TotpEnrolment } from "@svc/client";
import { useEffect, useState } from "preact/hooks";
import { call, client } from "./api.ts";
import { CodeField, Submit, submitted, TextField } from "./forms.tsx";
import { LinkedSignIns } from "./linked-sign-ins.tsx";
import { Outcome, useReported } from "./outcome.tsx";
import { ConfirmButton, useAction, useLatest, When } from "./parts.tsx";
import { StepUpPrompt, useStepUp } from "./step-up.tsx";

export function Account({ me }: { me: { username: string } }) {
  return (
    <section aria-labelledby="account-title">
      <h2 id="account-title">Your account ({me.username})</h2>
      <SecondFactor />
      <LinkedSignIns />
    </section>
  );
}

function SecondFactor() {
  const [status, setStatus] = useState<MfaStatus | null>(null);
  const [passkeys, setPasskeys] = useState<Passkey[]>([]);
  const [enrolment, setEnrolment] = useState<TotpEnrolment | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState("");
  const [offCode, setOffCode] = useState("");
  const [name, setName] = useState("");
  const action = useAction();
  const only = useLatest();

  const load = () =>
    action.run(() =>
      only(async (read) => {
        const factors = await call(() => client.auth.mfa());
        if (read.latest()) setStatus(factors);
        const listed = await call(() => client.auth.passkeys.list());
        if (read.latest()) setPasskeys(listed);
      }),
    );
  useEffect(() => {
    void load();
  }, []);
  const { done, act } = useReported(action, load);
  const stepUp = useStepUp(action, act);
  const { guarded } = stepUp;
  const remove = (passkey: Passkey) => {
    const done = `Passkey ${passkey.name} removed`;
    return act(done, () =>
      guarded("Removing a passkey", done, () => call(() => client.auth.passkeys.remove(passkey.id))),
    );
  };
  const totp = status?.totp;
  return (
    <section aria-labelledby="second-factor-title">
      <h3 id="second-factor-title">Second factor</h3>
      <Outcome error={action.error} done={done} />
      {codes && (
        <div class="issued" role="region" aria-label="Recovery codes">
          <p>
            Your recovery codes, shown only now. Keep them somewhere safe, away from your phone: each one signs you in
            once if you lose it.
          </p>
          <ul class="codes">
            {codes.map((each) => (
              <li key={each}>
                <code class="code">{each}</code>
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => setCodes(null)}>
            I have kept them
          </button>
        </div>
      )}

      <h4>Authenticator app</h4>
      {totp?.enabled ? (
        <form
          onSubmit={submitted(() =>
            act("Authenticator app turned off", async () => {
              await call(() => client.auth.disableTotp({ code: offCode }));
              setOffCode("");
            }),
          )}
        >
          <p>
            On since <When at={totp.confirmed_at} />; {status?.recovery_codes_left ?? 0} recovery codes left.
          </p>
          <CodeField label="Current code" name="current-code" value={offCode} set={setOffCode} />
          <Submit busy={action.busy} class="danger">
            Turn off
          </Submit>
        </form>
      ) : enrolment ? (
        <form
          onSubmit={submitted(() =>
            act("Authenticator app turned on", async () => {
              const answer = await call(() => client.auth.confirmTotp(code));
              setCodes(answer.recovery_codes);
              setEnrolment(null);
              setCode("");
            }),
          )}
        >
          <p>Scan this code with your authenticator app, or type the secret into it; then enter the code it shows.</p>
          <img
            class="qr"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qr_svg)}`}
            alt="QR code of the authenticator app's secret"
            width={200}
            height={200}
          />
          <p>
            Secret: <code class="code">{enrolment.secret}</code>{" "}
            <a href={enrolment.otpauth_uri}>Open in an authenticator app on this device</a>
          </p>
          <CodeField label="Code" name="code" value={code} set={setCode} />
          <Submit busy={action.busy}>Turn on</Submit>{" "}
          <button type="button" onClick={() => setEnrolment(null)}>
            Cancel
          </button>
        </form>
      ) : (
        <button
          type="button"
          disabled={action.busy || !status}
          onClick={() =>
            void action.run(async () =>
              guarded("Setting up an authenticator app", "", async () =>
                setEnrolment(await call(() => client.auth.enrolTotp())),
              ),
            )
          }
        >
          Set up an authenticator app
        </button>
      )}

      <h4>Passkeys</h4>
      {passkeys.length === 0 ? (
        <p class="muted">No passkeys yet.</p>
      ) : (
        <ul class="passkeys" aria-label="Your passkeys">
          {passkeys.map((passkey) => (
            <li key={passkey.id} data-passkey={passkey.name}>
              <strong>{passkey.name}</strong> added <When at={passkey.created_at} />, last used{" "}
              <When at={passkey.last_used_at} />{" "}
              <ConfirmButton
                label="Remove"
                question={`Remove the passkey ${passkey.name}?`}
                onConfirm={() => void remove(passkey)}
              />
            </li>
          ))}
        </ul>
      )}
      <StepUpPrompt stepUp={stepUp} totp={totp?.enabled ?? false} busy={action.busy} />
      <form
        onSubmit={submitted(() =>
          act("Passkey added", () =>
            guarded("Adding a passkey", "Passkey added", async () => {
              const options = await call(() => client.auth.passkeys.options());
              const response = await startRegistration({ optionsJSON: options });
              await call(() => client.auth.passkeys.register(response, name || undefined));
              setName("");
            }),
          ),
        )}
      >
        <TextField label="Passkey name" name="passkey-name" value={name} set={setName} />
        <Submit busy={action.busy}>Add a passkey</Submit>
      </form>
    </section>
  );
}
