// Time as the backup schedule sees it: the real one, or one a test moves by hand.

export interface Clock {
  now(): number;
  /** Calls `run` after `ms`; the timer does not keep the process alive. */
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

export const REAL_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout(run, ms) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};
