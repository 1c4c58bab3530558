// One renewal at a time among everything that shares a session: the clients of this page or process that
// share a store (a chain per store), and in browsers the other tabs (a Web Lock by name).

const chains = new WeakMap<object, Promise<unknown>>();

interface WebLocks {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/** Runs `work` once everything else holding `holder` (and, where Web Locks exist, the lock `name`) is done. */
export function exclusive<T>(holder: object, name: string, work: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as { locks?: WebLocks } | undefined)?.locks;
  const previous = chains.get(holder) ?? Promise.resolve();
  const run = previous.then(() => (locks ? locks.request(name, work) : work()));
  chains.set(
    holder,
    run.catch(() => {}),
  );
  return run;
}
