// What svc holds back until this session shows a second factor (a step-up: a passkey added or removed, an
// app enrolled beside a passkey, a provider linked or unlinked), and the prompt that shows one and runs the
// held action again.
import { startAuthentication } from "@simplewebauthn/browser";
import { useState } from "preact/hooks";
import { ApiError, call, client } from "./api.ts";
import { CodeField, Submit, submitted } from "./forms.tsx";
import type { Action } from "./parts.tsx";

interface Held {
  /** What was held back, as the prompt says it ("Removing a passkey"). */
  what: string;
  /** What the view says once it is done. */
  done: string;
  again: () => Promise<unknown>;
}

/** `act` as useReported's: runs work, says `what` when it succeeds, and reads the view again. */
type Act = (what: string, work: () => Promise<unknown>) => Promise<boolean>;

export function useStepUp(action: Action, act: Act) {
  const [held, setHeld] = useState<Held | null>(null);
  return {
    held,
    cancel: () => setHeld(null),
    /** Runs `work`; when svc asks for a step-up first, keeps it to run again after one. */
    async guarded(what: string, done: string, work: () => Promise<unknown>): Promise<unknown> {
      setHeld(null);
      try {
        return await work();
      } catch (error) {
        if (error instanceof ApiError && error.code === "mfa_step_up_required") setHeld({ what, done, again: work });
        throw error;
      }
    },
    /** Shows a factor for this session (`proof`), then runs again what was held back. */
    show: (proof: () => Promise<unknown>) =>
      action.run(async () => {
        await proof();
        const then = held;
        setHeld(null);
        if (then) await act(then.done, then.again);
      }),
  };
}

export type StepUp = ReturnType<typeof useStepUp>;

/** The prompt for a held action: a code from the app (when it is on) or a passkey. */
export function StepUpPrompt({ stepUp, totp, busy }: { stepUp: StepUp; totp: boolean; busy: boolean }) {
  const [code, setCode] = useState("");
  if (!stepUp.held) return null;
  return (
    <form
      aria-label="Confirm it is you"
      onSubmit={submitted(() =>
        stepUp.show(async () => {
          await call(() => client.auth.stepUp({ code }));
          setCode("");
        }),
      )}
    >
      <p>{stepUp.held.what} needs a second factor shown in the last 5 minutes.</p>
      {totp && (
        <>
          <CodeField label="Code from your authenticator app" name="step-up-code" value={code} set={setCode} />
          <Submit busy={busy}>Confirm</Submit>{" "}
        </>
      )}
      <button
        type="button"
        disabled={busy}
        onClick={() =>
          void stepUp.show(async () => {
            const options = await call(() => client.auth.stepUpOptions());
            const webauthn = await startAuthentication({ optionsJSON: options });
            await call(() => client.auth.stepUp({ webauthn }));
          })
        }
      >
        Confirm with a passkey
      </button>{" "}
      <button type="button" onClick={stepUp.cancel}>
        Cancel
      </button>
    </form>
  );
}
