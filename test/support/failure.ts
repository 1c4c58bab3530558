// What a promise fails with, for a test to assert on. Not `expect(promise).rejects` (nor `.resolves`): handed a
// promise still pending, bun test 1.4.5 spins its event loop in place until it settles, and one settled from a
// setImmediate (playwright's, for one) is seen only at the loop's next unrelated wake-up, seconds later on a
// loaded machine (oven-sh/bun#39268). A console test that passed alone failed six runs in eight beside two CPU
// hogs that way; awaited first, as here, it passed every time. test/test-kit.test.ts keeps the rule.

/** The failure `promise` ends in (null when it succeeds), for a test to look into. */
export function failure<T = unknown>(promise: Promise<unknown>): Promise<T | null> {
  return promise.then(
    () => null,
    (error: unknown) => error as T,
  );
}

/** The failure `promise` ends in, which must be a `kind` (a success or any other failure fails the test). */
export async function failureOf<E>(promise: Promise<unknown>, kind: abstract new (...args: never[]) => E): Promise<E> {
  const error = await failure(promise);
  if (error instanceof kind) return error;
  throw new Error(`expected a ${kind.name}, got ${error === null ? "a success" : String(error)}`);
}
