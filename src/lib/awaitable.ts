// A value now, or a promise of it later: what the steps of a busy read return, so that when every one of
// them is answered from memory the read completes in one synchronous call. Each `await` on the way costs a
// turn of the microtask queue (docs/performance.md, "What keeps svc near the floor").

export type Awaitable<T> = T | Promise<T>;

/** `next` applied to the value: at once when there is one, once it arrives when it is a promise. */
export function chain<T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * `next` applied to what `work` gives, or `failed` to what it throws or rejects with: at once when `work`
 * answers at once. A failure of `next` itself is not handed to `failed`.
 */
export function tryChain<T, U>(
  work: () => Awaitable<T>,
  next: (value: T) => Awaitable<U>,
  failed: (error: unknown) => Awaitable<U>,
): Awaitable<U> {
  let value: Awaitable<T>;
  try {
    value = work();
  } catch (error) {
    return failed(error);
  }
  return value instanceof Promise ? value.then(next, failed) : next(value);
}
