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

/** A read begun by `useLatest`: its number, and whether it is still the latest one begun. */
export interface Read {
  asked: number;
  latest(): boolean;
}

/**
 * For a view's reads, of which only the latest counts: a read asked for earlier can answer later, when what it
 * says is old. `only(work)` runs one; `work` keeps what it read only while `read.latest()` holds, and a failure
 * once a later read has begun is dropped (the view shows the later read's outcome, not an old error).
 */
export function useLatest() {
  const counter = useRef(0);
  return async function only(work: (read: Read) => Promise<void>): Promise<void> {
    const asked = ++counter.current;
    const latest = () => asked === counter.current;
    try {
      await work({ asked, latest });
    } catch (error) {
      if (latest()) throw error;
    }
  };
}

/** Runs an action and keeps its error for display; `busy` while it runs. */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // Busy until the last of the runs on their way has ended, not the first.
  const running = useRef(0);
  async function run(action: () => Promise<unknown>): Promise<boolean> {
    running.current++;
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      if (--running.current === 0) setBusy(false);
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
