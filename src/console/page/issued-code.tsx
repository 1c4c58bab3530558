// A code svc shows only once (a reset code, an invitation's): said once, with a button that copies it.
import { When } from "./parts.tsx";

/** The code shown, whom it is for, and until when it works. */
export interface Issued {
  whom: string;
  code: string;
  expiresAt: string;
}

/** The code, or nothing while none is shown; `kind` says what the code is ("Reset code") and names the region. */
export function IssuedCode({ kind, issued, onDone }: { kind: string; issued: Issued | null; onDone: () => void }) {
  if (!issued) return null;
  return (
    <div class="issued" role="region" aria-label={kind}>
      <p>
        {`${kind} for `}
        <strong>{issued.whom}</strong>, shown only now. It works once, until <When at={issued.expiresAt} />:
      </p>
      <p>
        <code class="code">{issued.code}</code>{" "}
        <button type="button" onClick={() => void navigator.clipboard?.writeText(issued.code)}>
          Copy code
        </button>{" "}
        <button type="button" onClick={onDone}>
          Done
        </button>
      </p>
    </div>
  );
}
