// The one wait-until of the tests: for what has no event to wait on (another process's log line, a file, a
// metric), poll with a short yield. The time limit is a failure guard only, never an assertion: on a loaded
// machine a wait is slower, not wrong, so the limits are generous and a test asserts what it waited for.

export interface WaitOptions {
  /** What is waited for, named in the error when the time is up. */
  what: string;
  /** The failure guard: 10 s unless given. */
  timeoutMs?: number;
  /** The pause between checks: 20 ms unless given. */
  everyMs?: number;
}

/** Resolves when `check` holds (returns true), or throws naming `what` once `timeoutMs` has passed. */
export async function waitUntil(check: () => boolean | Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = performance.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) throw new Error(`waited ${options.timeoutMs ?? 10_000} ms for ${options.what}`);
    await Bun.sleep(options.everyMs ?? 20);
  }
}

/** As waitUntil, but answers whether `check` came to hold instead of throwing (for a test that asserts a wait's end). */
export async function cameToHold(
  check: () => boolean | Promise<boolean>,
  options: Omit<WaitOptions, "what">,
): Promise<boolean> {
  try {
    await waitUntil(check, { ...options, what: "" });
    return true;
  } catch {
    return false;
  }
}
