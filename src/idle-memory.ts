// Memory back to the system once a burst is over. JavaScriptCore keeps the heap it grew under load
// for the next burst: after 5,400 createCategory in 3 s, svc sat at 111 MB for as long as it stayed
// idle. Once a whole check period passes without a request after some, svc runs a full collection,
// asks JavaScriptCore to shrink its heap (release the freed pages) and the database's client to drop
// its cache: the same burst then settled at 100 MB within 2 s and 91 MB within 10 s.
//
// The period is short, so memory comes back a quarter of a second after a burst rather than one or two
// seconds: some of it JavaScriptCore returns only about 4 s after the shrink, which then lands 4.5 s
// after the burst instead of 6. A release costs 3-6 ms of the event loop and costs the next request
// about 2 ms (its code runs unoptimised again), so there is at most one per RELEASE_AT_MOST_EVERY_MS:
// a client polling every 300 ms does not pay it on every poll. README, "Footprint".

/** How long without a request counts as quiet: one check period. */
const QUIET_MS = 250;
/** The least time between two releases. */
const RELEASE_AT_MOST_EVERY_MS = 5000;

function collect(releaseDatabase: () => void): void {
  releaseDatabase();
  Bun.gc(true);
  // Deprecated in Bun's types, without a replacement: it asks JavaScriptCore to shrink its footprint
  // when next idle, which is now.
  Bun.shrink();
}

/**
 * The check, to be run once a period: calls `release` when no request began since the last check but
 * some had since the release before, and the release before was at least `atMostEvery` ms ago (by
 * `now`); a release owed until then is made at the first check after it.
 */
export function quietSpellCheck(
  requestsBegun: () => number,
  release: () => void,
  { atMostEvery = RELEASE_AT_MOST_EVERY_MS, now = () => performance.now() } = {},
): () => void {
  let seen = requestsBegun();
  let owed = false;
  let releasedAt = -Infinity;
  return () => {
    const begun = requestsBegun();
    if (begun !== seen) {
      seen = begun;
      owed = true;
      return;
    }
    if (!owed || now() - releasedAt < atMostEvery) return;
    owed = false;
    releasedAt = now();
    release();
  };
}

/**
 * Starts watching `requestsBegun` (a count that grows with each request), releasing the process's
 * memory and `releaseDatabase`'s in each quiet spell; returns the stop.
 */
export function returnMemoryWhenIdle(requestsBegun: () => number, releaseDatabase: () => void): () => void {
  const timer = setInterval(
    quietSpellCheck(requestsBegun, () => collect(releaseDatabase)),
    QUIET_MS,
  );
  timer.unref();
  return () => clearInterval(timer);
}
