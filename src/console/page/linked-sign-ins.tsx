// Your account's sign-ins at OpenID providers (docs/oidc.md): each identity linked (its e-mail, when last
// used), a button to link each provider not linked yet (the browser goes to the provider and comes back here),
// and unlinking, which svc refuses while it is the account's last way in. Both may need a step-up first.
import type { Identity } from "@svc/client";
import { useEffect, useState } from "preact/hooks";
import { call, client, here, type OidcProvider, providers } from "./api.ts";
import { Outcome, useReported } from "./outcome.tsx";
import { ConfirmButton, useAction, useLatest, When } from "./parts.tsx";
import { StepUpPrompt, useStepUp } from "./step-up.tsx";

/** Where a link comes back to: this view, told which provider by `?linked=`. */
const ACCOUNT_VIEW = "#/account";

export function LinkedSignIns() {
  const [identities, setIdentities] = useState<Identity[]>([]);
  const [offered, setOffered] = useState<OidcProvider[]>([]);
  const [totp, setTotp] = useState(false);
  const action = useAction();
  const only = useLatest();
  const load = () =>
    action.run(() =>
      only(async (read) => {
        const all = await providers();
        if (read.latest()) setOffered(all);
        const linked = await call(() => client.auth.identities());
        if (read.latest()) setIdentities(linked);
        const factors = await call(() => client.auth.mfa());
        if (read.latest()) setTotp(factors.totp.enabled);
      }),
    );
  const { done, say, act } = useReported(action, load);
  const stepUp = useStepUp(action, act);
  const labelOf = (name: string) => offered.find((provider) => provider.name === name)?.label ?? name;
  useEffect(() => {
    void load();
    // Back from linking: said once, and the query left behind.
    const linked = new URLSearchParams(location.search).get("linked");
    if (linked === null) return;
    history.replaceState(null, "", here(location.hash));
    void providers().then((all) => say(`${all.find((p) => p.name === linked)?.label ?? linked} linked`));
  }, []);

  if (offered.length === 0 && identities.length === 0) return null;
  const unlinked = offered.filter((provider) => !identities.some((identity) => identity.provider === provider.name));
  const link = (provider: OidcProvider) =>
    action.run(() =>
      stepUp.guarded(`Linking ${provider.label}`, "", () =>
        call(() => client.auth.linkIdentity(provider.name, { returnTo: here(ACCOUNT_VIEW) })),
      ),
    );
  const unlink = (label: string, name: string) => {
    const said = `${label} unlinked`;
    return act(said, () =>
      stepUp.guarded(`Unlinking ${label}`, said, () => call(() => client.auth.unlinkIdentity(name))),
    );
  };
  return (
    <section aria-labelledby="linked-title">
      <h3 id="linked-title">Linked sign-ins</h3>
      <Outcome error={action.error} done={done} />
      {identities.length === 0 ? (
        <p class="muted">No sign-ins linked yet.</p>
      ) : (
        <ul class="identities" aria-label="Your linked sign-ins">
          {identities.map((identity) => (
            <li key={identity.id} data-identity={identity.provider}>
              <strong>{labelOf(identity.provider)}</strong> {identity.email ?? ""}, last used{" "}
              <When at={identity.last_used_at} />{" "}
              <ConfirmButton
                label="Unlink"
                question={`Unlink ${labelOf(identity.provider)}?`}
                onConfirm={() => void unlink(labelOf(identity.provider), identity.provider)}
              />
            </li>
          ))}
        </ul>
      )}
      <StepUpPrompt stepUp={stepUp} totp={totp} busy={action.busy} />
      {unlinked.map((provider) => (
        <button key={provider.name} type="button" disabled={action.busy} onClick={() => void link(provider)}>
          Link {provider.label}
        </button>
      ))}
    </section>
  );
}
