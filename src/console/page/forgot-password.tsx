// "Forgot password?" on the sign-in page: asks svc to mail a reset link. What it says is the same for
// every address (svc answers them alike), unless the asking is throttled or svc sends no mail.
import { useState } from "preact/hooks";
import { requestPasswordReset, type ResetRequestOutcome } from "./api.ts";
import { Submit, submitted, TextField } from "./forms.tsx";
import { ErrorNote, useAction } from "./parts.tsx";

export const RESET_SENT =
  "If an account has this address, a link to choose a new password is on its way. It works for 30 minutes.";

function message(outcome: ResetRequestOutcome): string {
  if (outcome.kind === "throttled")
    return `Too many requests: try again in ${outcome.retryAfter} second${outcome.retryAfter === 1 ? "" : "s"}.`;
  if (outcome.kind === "no_mail") return "svc sends no mail here: ask an administrator to reset your password.";
  return RESET_SENT;
}

export function ForgotPassword({ onDone }: { onDone: () => void }) {
  const [email, setEmail] = useState("");
  const [outcome, setOutcome] = useState<ResetRequestOutcome | null>(null);
  const action = useAction();
  return (
    <form
      class="forgot-password"
      onSubmit={submitted(() => action.run(async () => setOutcome(await requestPasswordReset(email))))}
    >
      <h2>Forgot password?</h2>
      <TextField
        label="Your account's e-mail"
        name="email"
        type="email"
        autoComplete="email"
        required
        value={email}
        set={setEmail}
      />
      <Submit busy={action.busy}>Send a reset link</Submit>{" "}
      <button type="button" class="link" onClick={onDone}>
        Back to sign-in
      </button>
      {outcome && (
        <p class={outcome.kind === "sent" ? "notice" : "error"} role="status">
          {message(outcome)}
        </p>
      )}
      <ErrorNote error={action.error} />
    </form>
  );
}
