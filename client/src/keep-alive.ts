// keepAlive: renews when the session held now is due, whether or not a call needs it. Each client (each tab)
// renews on its own timer, so an idle page's session lives on with the page. A renewal that fails is not
// tried again here: the next call tries.
import { dueForRenewal, type Held, LONGEST_TIMEOUT_MS, renewAt } from "./held-session.js";

export interface KeepAlive {
  /** Sets the timer for the session held now (none when there is none). */
  schedule(): void;
  stop(): void;
}

/** A timer that calls `renew` when the session `current()` returns is due, unless it changed meanwhile. */
export function keepAlive(current: () => Held | null, renew: (held: Held) => void): KeepAlive {
  let timer: ReturnType<typeof setTimeout> | undefined;
  function schedule(): void {
    clearTimeout(timer);
    timer = undefined;
    const held = current();
    if (!held) return;
    const delay = Math.min(Math.max(0, renewAt(held) - Date.now()), LONGEST_TIMEOUT_MS);
    timer = setTimeout(() => {
      if (current() !== held) return;
      if (!dueForRenewal(held)) return schedule();
      renew(held);
    }, delay);
    // Node and Bun: a timer would keep the process alive after its last call.
    (timer as { unref?: () => void }).unref?.();
  }
  return { schedule, stop: () => clearTimeout(timer) };
}
