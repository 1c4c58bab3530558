// Memory back to the system once a burst is over. JavaScriptCore keeps the heap it grew under load
// for the next burst, for as long as svc stays idle (bench/results.md, "Figures behind the code"). Once a whole check period passes without a request after some, svc runs a full collection
// and asks the database's client to drop its cache; once the quiet has lasted SVC_RELEASE_CODE_AFTER
// (by default that same first check) it also asks JavaScriptCore to shrink its footprint, which throws
// away compiled code: most of what a load leaves behind.
//
// The period is short, so memory comes back soon after a burst. The shrink slows the next request (its
// code runs unoptimised again) and puts a tail on a burst (bench/results.md, "Figures behind the code"), so there is at most one per
// RELEASE_AT_MOST_EVERY_MS, and SVC_RELEASE_CODE_AFTER lets a service whose clients come back within
// seconds keep its code for them. docs/performance.md, "Footprint".

/** How long without a request counts as quiet: one check period. */
const QUIET_MS = 250;
/** The least time between two releases of one kind. */
const RELEASE_AT_MOST_EVERY_MS = 5000;

/** The cheap part, made at the first quiet check: the database's cache and the burst's garbage. */
function collect(releaseDatabase: () => void): void {
  releaseDatabase();
  Bun.gc(true);
}

/** The dear part: the compiled code, which the next burst compiles again. */
function dropCode(): void {
  // Deprecated in Bun's types, without a replacement: it asks JavaScriptCore to shrink its footprint
  // when next idle, which is now; that throws away compiled code and collects.
  Bun.shrink();
}

/**
 * The check, to be run once a period: calls `release` once the requests counted by `requestsBegun` have
 * stopped (no new one since the check before) for at least `after` ms, if some came since the release
 * before and that release was at least `atMostEvery` ms ago (by `now`); a release owed until then is made
 * at the first check after it. Quiet is counted from the last check that saw a new request.
 */
export function quietSpellCheck(
  requestsBegun: () => number,
  release: () => void,
  { after = 0, atMostEvery = RELEASE_AT_MOST_EVERY_MS, now = () => performance.now() } = {},
): () => void {
  let seen = requestsBegun();
  let owed = false;
  let busyAt = -Infinity;
  let releasedAt = -Infinity;
  return () => {
    const begun = requestsBegun();
    if (begun !== seen) {
      seen = begun;
      owed = true;
      busyAt = now();
      return;
    }
    if (!owed || now() - busyAt < after || now() - releasedAt < atMostEvery) return;
    owed = false;
    releasedAt = now();
    release();
  };
}

/**
 * Starts watching `requestsBegun` (a count that grows with each request): in each quiet spell releases
 * `releaseDatabase`'s memory and the garbage at once, and the compiled code once the spell has lasted
 * `dropCodeAfterMs`; returns the stop.
 */
export function returnMemoryWhenIdle(
  requestsBegun: () => number,
  releaseDatabase: () => void,
  dropCodeAfterMs: number,
): () => void {
  const collectWhenQuiet = quietSpellCheck(requestsBegun, () => collect(releaseDatabase));
  const dropCodeWhenQuiet = quietSpellCheck(requestsBegun, dropCode, { after: dropCodeAfterMs });
  const timer = setInterval(() => {
    // In this order when both fall due at once: the collection's garbage is gone before the shrink.
    collectWhenQuiet();
    dropCodeWhenQuiet();
  }, QUIET_MS);
  timer.unref();
  return () => clearInterval(timer);
}
