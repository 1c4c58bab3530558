// What an action on a view came to, said above the view: its error, or the line saying what it did ("ann
// disabled"), which screen readers announce.
import { useState } from "preact/hooks";
import { type Action, ErrorNote } from "./parts.tsx";

export function Outcome({ error, done }: { error: unknown; done: string }) {
  return (
    <>
      <ErrorNote error={error} />
      <p class="done" role="status">
        {done}
      </p>
    </>
  );
}

/** Actions run through `action`, each said as done when it succeeds, and then the view is read again (`reload`). */
export function useReported(action: Action, reload: () => Promise<unknown>) {
  const [done, setDone] = useState("");
  async function act(what: string, work: () => Promise<unknown>): Promise<boolean> {
    setDone("");
    if (!(await action.run(work))) return false;
    setDone(what);
    await reload();
    return true;
  }
  return { done, say: setDone, act };
}
