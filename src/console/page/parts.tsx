// Small pieces every view uses: the error note, a confirm-before-acting button, dates.
import { useRef, useState } from "preact/hooks";
import { ApiError } from "./api.ts";

/** An API error as its title and detail, never as raw JSON; announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const [title, detail] =
    error instanceof ApiError
      ? [error.title, error.detail]
      : ["Error", error instanceof Error ? error.message : String(error)];
  return (
    <p class="error" role="alert">
      <strong>{title}</strong>
      {detail && `: ${detail}`}
      {/* SVC_ADMIN_MFA=required: a session from before the factor shows it by signing in again in two steps. */}
      {error instanceof ApiError && error.code === "mfa_step_up_required" && " Sign out, and sign in again with it."}
      {/* And without a factor, the way on is the account page. */}
      {error instanceof ApiError && error.code === "mfa_enrolment_required" && (
        <>
          {" "}
          <a href="#/account">Set up a second factor</a>
        </>
      )}
    </p>
  );
}

/**
 * For a view's reads: `begin()` as one starts, and its answer is kept only while `begin` has not been called
 * since (the answer's `latest()` holds). A read asked for earlier can answer later; its state is old by then.
 */
export function useLatest(): () => () => boolean {
  const counter = useRef(0);
  return () => {
    const asked = ++counter.current;
    return () => asked === counter.current;
  };
}

/** Runs an action and keeps its error for display; `busy` while it runs. */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function run(action: () => Promise<unknown>): Promise<boolean> {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { error, busy, run, clear: () => setError(null) };
}

export type Action = ReturnType<typeof useAction>;

/** A button that asks once more ("Delete ann?") before doing anything. */
export function ConfirmButton({
  label,
  question,
  onConfirm,
}: {
  label: string;
  question: string;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)} autoFocus>
        Cancel
      </button>
    </span>
  );
}

export function When({ at }: { at: string | null }) {
  if (!at) return <span class="muted">never</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}
