// Memory back to the system once a burst is over. JavaScriptCore keeps the heap it grew under load
// for the next burst: after 5,400 createCategory in 3 s, svc sat at 111 MB for as long as it stayed
// idle. Once a whole check period passes without a request after some, svc runs a full collection and
// asks JavaScriptCore to shrink its heap (release the freed pages): the same burst then settled at
// 100 MB within 2 s and 91 MB within 10 s. It runs once per quiet spell, never under load, and costs
// 3-6 ms of the event loop.

/** How long without a request counts as quiet. */
const QUIET_MS = 1000;

function collect(): void {
  Bun.gc(true);
  // Deprecated in Bun's types, without a replacement: it asks JavaScriptCore to shrink its footprint
  // when next idle, which is now.
  Bun.shrink();
}

/**
 * The check, to be run once a period: calls `release` when no request began since the last check but
 * some had since the release before.
 */
export function quietSpellCheck(requestsBegun: () => number, release: () => void): () => void {
  let seen = requestsBegun();
  let owed = false;
  return () => {
    const now = requestsBegun();
    if (now !== seen) {
      seen = now;
      owed = true;
      return;
    }
    if (!owed) return;
    owed = false;
    release();
  };
}

/** Starts watching `requestsBegun` (a count that grows with each request); returns the stop. */
export function returnMemoryWhenIdle(requestsBegun: () => number): () => void {
  const timer = setInterval(quietSpellCheck(requestsBegun, collect), QUIET_MS);
  timer.unref();
  return () => clearInterval(timer);
}
