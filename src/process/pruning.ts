// Deletes what has expired in the background: sessions and spent refresh tokens, reset codes, invitations,
// the tokens of mailed links (verification, reset, e-mail change), logins' second steps and WebAuthn
// challenges, OpenID sign-ins' one-time codes, Idempotency-Key answers, audit events past their retention,
// category events past their bounds, and sent mails. Small batches, each its own short statement, so no lock
// is held for long and requests go on between them.
import type { Store } from "../db/store.ts";
import type { LineLogger } from "../observability/log-lines.ts";

/** One kind of expired row: prune deletes up to `limit` of them as of `now` (ms) and says how many went. */
export interface PruneJob {
  what: string;
  prune(now: number, limit: number): Promise<number>;
}

export interface PrunerOptions {
  jobs: PruneJob[];
  logger: LineLogger;
  everyMs?: number;
  /** Rows per statement. */
  batch?: number;
  now?: () => number;
}

export const PRUNE_EVERY_MS = 60_000;
/**
 * A day at least: forgetting an account's old failures lets its next block start small again, so at most
 * SVC_LOGIN_MAX_FAILURES guesses a day come of it; serve.ts raises it to the longest window configured.
 */
export const THROTTLE_KEPT_MS = 86_400_000;
export const PRUNE_BATCH = 500;
/** A login's second step is kept this long past its expiry: a late answer is told it expired, not that it is unknown. */
export const SECOND_STEP_KEPT_MS = 3_600_000;

/**
 * The store's expiring rows: sessions and refresh tokens, reset codes, invitations, mailed links' tokens, kept
 * answers, and audit events older than the retention.
 */
export function storeJobs(
  store: Pick<
    Store,
    | "sessions"
    | "resets"
    | "invitations"
    | "audit"
    | "idempotency"
    | "categoryEvents"
    | "throttle"
    | "emailVerifications"
    | "mfa"
    | "passkeys"
    | "identities"
    | "mailedResets"
    | "emailChanges"
    | "mail"
  >,
  auditRetentionSeconds: number,
  events: { kept: number; keptForSeconds: number },
  /** How long a throttle key (login or sign-up) is kept after its last attempt, once no block holds it. */
  throttleKeptMs: number = THROTTLE_KEPT_MS,
  /** SVC_MAIL_KEEP: how long a sent mail's row is kept. */
  mailKeepSeconds = 7 * 86400,
): PruneJob[] {
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    { what: "expired sessions and refresh tokens", prune: (now, limit) => store.sessions.prune(iso(now), limit) },
    { what: "expired password reset codes", prune: (now, limit) => store.resets.prune(iso(now), limit) },
    { what: "expired invitations", prune: (now, limit) => store.invitations.prune(iso(now), limit) },
    {
      what: "expired e-mail verification tokens",
      prune: (now, limit) => store.emailVerifications.prune(iso(now), limit),
    },
    { what: "expired mailed reset tokens", prune: (now, limit) => store.mailedResets.prune(iso(now), limit) },
    { what: "expired e-mail change tokens", prune: (now, limit) => store.emailChanges.prune(iso(now), limit) },
    {
      what: "expired second login steps",
      prune: (now, limit) => store.mfa.pruneChallenges(iso(now - SECOND_STEP_KEPT_MS), limit),
    },
    // Sign-in options need no token, so many are never answered.
    { what: "expired WebAuthn challenges", prune: (now, limit) => store.passkeys.pruneChallenges(iso(now), limit) },
    // A code is spent or expired after a minute; its row is of no further use.
    { what: "expired one-time sign-in codes", prune: (now, limit) => store.identities.pruneCodes(iso(now), limit) },
    { what: "expired Idempotency-Key answers", prune: (now, limit) => store.idempotency.prune(iso(now), limit) },
    {
      what: "audit events past their retention",
      prune: (now, limit) => store.audit.prune(iso(now - auditRetentionSeconds * 1000), limit),
    },
    {
      what: "login and sign-up limits idle past their windows",
      prune: (now, limit) => store.throttle.prune(iso(now - throttleKeptMs), limit),
    },
    {
      what: "category events past SVC_EVENTS_KEEP or SVC_EVENTS_KEEP_FOR",
      prune: (now, limit) => store.categoryEvents.prune(events.kept, iso(now - events.keptForSeconds * 1000), limit),
    },
    {
      what: "mails sent before SVC_MAIL_KEEP",
      prune: (now, limit) => store.mail.prune(iso(now - mailKeepSeconds * 1000), limit),
    },
  ];
}

/** Deletes batches of each job until one comes back short; how many rows went in all. */
export async function pruneExpired({
  jobs,
  batch = PRUNE_BATCH,
  now = Date.now,
}: Pick<PrunerOptions, "jobs" | "batch" | "now">): Promise<number> {
  let total = 0;
  for (const job of jobs) {
    for (;;) {
      const gone = await job.prune(now(), batch);
      total += gone;
      if (gone < batch) break;
      // Let waiting requests have the database between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return total;
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
        if (gone > 0) logger.debug({ rows: gone }, "expired rows deleted");
      },
      (error: unknown) => logger.warn({ err: error }, "pruning expired rows failed; trying again later"),
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
