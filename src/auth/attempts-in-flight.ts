// The login attempts this instance has reserved and not yet finished, per account, and the attempts
// waiting for them. An account reaches its limit of reservations while its attempts are in flight,
// before anyone knows whether they fail: a right password arriving then waits for them to finish
// (a success frees the account) rather than being refused for guesses that may not be guesses.

export interface WaitLimits {
  /** How long an attempt waits at most, in all. */
  ms: number;
  /** Attempts waiting on one account; past it, the next is refused at once. */
  perAccount: number;
  /** Attempts waiting on all accounts together. */
  total: number;
}

/** A production instance's bounds: a few password checks' time, a queue no flood can grow. */
export const WAIT_LIMITS: WaitLimits = Object.freeze({ ms: 3000, perAccount: 32, total: 1024 });

interface Account {
  running: number;
  waiting: Set<() => void>;
}

export class AttemptsInFlight {
  private readonly accounts = new Map<string, Account>();
  private waitingTotal = 0;

  constructor(private readonly limits: WaitLimits = WAIT_LIMITS) {}

  /** An attempt on the account was reserved. */
  enter(key: string): void {
    const account = this.accounts.get(key);
    if (account) account.running++;
    else this.accounts.set(key, { running: 1, waiting: new Set() });
  }

  /**
   * An attempt on the account finished. The waiting attempts try again after a success (which cleared
   * the account's count), or once none is left running (so that each learns its answer: another
   * instance may have freed the account meanwhile).
   */
  leave(key: string, succeeded: boolean): void {
    const account = this.accounts.get(key);
    if (!account) return;
    account.running--;
    if (succeeded || account.running === 0) {
      for (const wake of account.waiting) wake();
      account.waiting.clear();
    }
    if (account.running === 0 && account.waiting.size === 0) this.accounts.delete(key);
  }

  /** When an attempt that waited must give up. */
  deadline(): number {
    return performance.now() + this.limits.ms;
  }

  /**
   * Waits until one of the account's attempts finishes, or the deadline passes. false, at once, when
   * none runs here (nothing to wait for) or the queue is full; false when the deadline passed.
   */
  wait(key: string, deadline: number): Promise<boolean> {
    const account = this.accounts.get(key);
    const left = deadline - performance.now();
    if (
      !account ||
      account.running === 0 ||
      left <= 0 ||
      account.waiting.size >= this.limits.perAccount ||
      this.waitingTotal >= this.limits.total
    ) {
      return Promise.resolve(false);
    }
    this.waitingTotal++;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), left);
      const wake = () => finish(true);
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        account.waiting.delete(wake);
        this.waitingTotal--;
        resolve(woken);
      };
      account.waiting.add(wake);
    });
  }
}
