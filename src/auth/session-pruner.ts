// Deletes expired sessions and spent refresh tokens in the background: small batches, each its own short
// statement, so no lock is held for long and requests go on between them.
import type { SessionStore } from "../db/store.ts";
import type { Logger } from "../log.ts";

export interface PrunerOptions {
  sessions: Pick<SessionStore, "prune">;
  logger: Logger;
  everyMs?: number;
  /** Rows per statement. */
  batch?: number;
  now?: () => number;
}

export const PRUNE_EVERY_MS = 60_000;
export const PRUNE_BATCH = 500;

/** Deletes batches until one comes back short; how many rows went. */
export async function pruneExpired({
  sessions,
  batch = PRUNE_BATCH,
  now = Date.now,
}: Pick<PrunerOptions, "sessions" | "batch" | "now">): Promise<number> {
  let total = 0;
  for (;;) {
    const gone = await sessions.prune(new Date(now()).toISOString(), batch);
    total += gone;
    if (gone < batch) return total;
    // Let waiting requests have the database between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Prunes now and then every `everyMs`; a failed round is logged and tried again at the next. Returns stop(). */
export function startPruning(options: PrunerOptions): () => Promise<void> {
  const { logger, everyMs = PRUNE_EVERY_MS } = options;
  let round: Promise<void> | null = null;
  const run = () => {
    // A round still going (a large backlog) is not joined by another.
    if (round) return;
    round = pruneExpired(options).then(
      (gone) => {
        if (gone > 0) logger.debug({ rows: gone }, "expired sessions and refresh tokens deleted");
      },
      (error: unknown) => logger.warn({ err: error }, "pruning expired sessions failed; trying again later"),
    );
    void round.then(() => {
      round = null;
    });
  };
  run();
  const timer = setInterval(() => {
    run();
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await round;
  };
}
