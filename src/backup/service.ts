// The backups of a serving svc: the schedule (SVC_BACKUP_EVERY), runs an administrator asks for, the
// retries of a failed one, and the state the admin API, the metrics and health report. One run at a time
// in a process; one process takes the schedule among those sharing the database (lock.ts). The last success is
// the newest of the database's own snapshots at the destination (names.ts), whoever stored it (another process,
// `svc backup --now` from cron), re-read every REREAD_MS and after each run; one dated in the future is none.
import { mkdtemp, rm } from "node:fs/promises";
import type { S3Settings } from "../config/index.ts";
import type { LineLogger } from "../observability/log-lines.ts";
import { type Clock, REAL_CLOCK } from "./clock.ts";
import type { Destination } from "./destination.ts";
import { failureReason } from "./failure.ts";
import { snapshotInWorker, type SnapshotJob } from "./in-worker.ts";
import { backupLock, type BackupLock } from "./lock.ts";
import { databaseIdentity } from "./identity.ts";
import { removeLeftovers } from "./leftovers.ts";
import { listingReader } from "./listing.ts";
import { parseSnapshotName, snapshotName, type SnapshotInfo } from "./names.ts";
import { scratchPrefix, type SnapshotRequest, type TakenSnapshot } from "./snapshot.ts";
import { storeSnapshot } from "./store.ts";

/** The waits after one, two, three, four or more failures in a row; each is cut short by a scheduled run. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000] as const;

/** How often the destination's listing is read again: the last success there, whoever stored it. */
export const REREAD_MS = 60_000;

export interface BackupsDeps {
  databasePath: string;
  destination: Destination;
  /** SVC_BACKUP_EVERY in seconds; null: runs only when asked for. */
  everySeconds: number | null;
  keep: number;
  /** Taken out of every failure's text. */
  s3: S3Settings;
  version: string;
  logger: LineLogger;
  snapshot?: (request: SnapshotRequest) => SnapshotJob;
  lock?: BackupLock;
  clock?: Clock;
  retryDelaysMs?: readonly number[];
  /** The database's identity, which its snapshots' names carry; read from the file at each run by default. */
  identity?: () => string | null;
  /** How often the listing is read again (REREAD_MS); null: only at start and after each run. */
  rereadMs?: number | null;
}

export interface BackupState {
  /** ok: the last run stored its snapshot; failing: it did not (retries may follow); pending: none has ended. */
  status: "ok" | "failing" | "pending";
  /**
   * When the newest of the database's snapshots at the destination was taken, whoever stored it, as last read (at
   * start, every REREAD_MS, after each run); one dated in the future is none.
   */
  lastSuccessAt: string | null;
  lastFailure: { at: string; reason: string } | null;
  /** Runs and retries that failed to store a snapshot, since svc started. */
  failures: number;
  running: boolean;
  /** The next scheduled run or retry; null for none. */
  nextRunAt: string | null;
  /** Whether this process takes the scheduled runs; null without a schedule. */
  scheduledHere: boolean | null;
}

export interface Backups {
  readonly everySeconds: number | null;
  readonly keep: number;
  /** Where the snapshots go, as people may see it. */
  readonly shown: string;
  state(): BackupState;
  /** The snapshots at the destination, oldest first. */
  list(): Promise<SnapshotInfo[]>;
  /** The same, or why they could not be listed (in one line, as a failure is told). */
  listing(): Promise<{ snapshots: SnapshotInfo[] } | { error: string }>;
  /** Begins a run now (retried as a scheduled one is), unless one is running. */
  runNow(): "started" | "running";
  /** Resolves once no run, and no reading of the listing, is going on (retries waiting for their time are not runs). */
  idle(): Promise<void>;
  /** Begins the schedule: the first run when the newest snapshot at the destination is SVC_BACKUP_EVERY old. */
  start(): Promise<void>;
  /** Ends the schedule and any snapshot being taken; leaves an upload to the process's end. */
  stop(): Promise<void>;
}

export function createBackups(deps: BackupsDeps): Backups {
  const { databasePath, destination, everySeconds, keep, logger, clock = REAL_CLOCK } = deps;
  const snapshot = deps.snapshot ?? snapshotInWorker;
  const lock = deps.lock ?? backupLock(databasePath);
  const delays = deps.retryDelaysMs ?? RETRY_DELAYS_MS;
  const everyMs = everySeconds === null ? null : everySeconds * 1000;
  const identity = deps.identity ?? (() => databaseIdentity(databasePath));
  const rereadMs = deps.rereadMs === undefined ? REREAD_MS : deps.rereadMs;
  const iso = (ms: number) => new Date(ms).toISOString();

  const state: Omit<BackupState, "running" | "nextRunAt"> = {
    status: "pending",
    lastSuccessAt: null,
    lastFailure: null,
    failures: 0,
    scheduledHere: everyMs === null ? null : false,
  };
  /** Whether this process holds the schedule; null until it first asks. */
  let scheduledHere: boolean | null = null;
  let nextScheduled: number | null = null;
  let retryAt: number | null = null;
  let failuresInRow = 0;
  /** A snapshot taken but not stored yet: a retry stores it rather than take another. */
  let pending: { taken: TakenSnapshot; scratch: string } | null = null;
  let running: Promise<void> | null = null;
  let job: SnapshotJob | null = null;
  let timer: unknown = null;
  let stopped = false;
  let readTimer: unknown = null;
  let reading: Promise<void> | null = null;
  const readListing = listingReader({ destination, identity, clock, logger, s3: deps.s3, state });

  function arm(): void {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
    const due = Math.min(nextScheduled ?? Infinity, retryAt ?? Infinity);
    if (stopped || due === Infinity) return;
    timer = clock.setTimeout(tick, Math.max(0, due - clock.now()));
  }

  /** The timer's end: the scheduled run or the retry that is due. A run arms the timer again when it ends. */
  function tick(): void {
    timer = null;
    const now = clock.now();
    if (nextScheduled !== null && everyMs !== null && now >= nextScheduled) {
      // The next slot after now: a run longer than the period, or a machine asleep, skips the slots missed.
      nextScheduled += everyMs * (Math.floor((now - nextScheduled) / everyMs) + 1);
      if (takeSchedule()) return void run(true);
    } else if (retryAt !== null && now >= retryAt) {
      retryAt = null;
      return void run(false);
    }
    arm();
  }

  /** Whether this process takes the scheduled runs, saying so when that changes. */
  function takeSchedule(): boolean {
    const here = lock.hold();
    if (here !== scheduledHere) {
      if (here) logger.info({ to: destination.shown }, "scheduled backups are taken by this process");
      else logger.info("scheduled backups are taken by another svc process sharing this database");
      state.scheduledHere = scheduledHere = here;
    }
    return here;
  }

  function reread(): void {
    readTimer = null;
    reading = readListing()
      .then(() => {})
      .finally(() => {
        reading = null;
        armRead();
      });
  }

  function armRead(): void {
    if (readTimer !== null) clock.clearTimeout(readTimer);
    readTimer = null;
    if (!stopped && rereadMs !== null) readTimer = clock.setTimeout(reread, rereadMs);
  }

  function run(fresh: boolean): Promise<void> {
    if (running) return running;
    running = attempt(fresh).finally(() => {
      running = null;
      arm();
    });
    return running;
  }

  async function attempt(fresh: boolean): Promise<void> {
    const started = clock.now();
    if (fresh) await discardPending();
    try {
      pending ??= await takeOne(started);
      const { taken } = pending;
      const { pruned, pruneError } = await storeSnapshot(destination, taken, keep, identity(), clock.now());
      state.status = "ok";
      state.lastSuccessAt = parseSnapshotName(taken.name)?.takenAt ?? iso(started);
      failuresInRow = 0;
      retryAt = null;
      logger.info(
        {
          snapshot: taken.name,
          size: taken.size,
          to: destination.shown,
          pruned: pruned.length,
          ms: clock.now() - started,
        },
        "backup stored",
      );
      if (pruneError) {
        const reason = `stored ${taken.name}, but could not delete the oldest beyond SVC_BACKUP_KEEP: ${failureReason(pruneError, deps.s3)}`;
        state.lastFailure = { at: iso(clock.now()), reason };
        logger.warn({ to: destination.shown }, reason);
      }
      await discardPending();
    } catch (error) {
      failed(error);
    }
    await readListing();
  }

  async function takeOne(at: number): Promise<{ taken: TakenSnapshot; scratch: string }> {
    const scratch = await mkdtemp(scratchPrefix(databasePath));
    try {
      job = snapshot({ databasePath, scratch, name: snapshotName(new Date(at), deps.version, identity()) });
      return { taken: await job.done, scratch };
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    } finally {
      job = null;
    }
  }

  function failed(error: unknown): void {
    const now = clock.now();
    const reason = failureReason(error, deps.s3);
    state.status = "failing";
    state.failures++;
    state.lastFailure = { at: iso(now), reason };
    failuresInRow++;
    const wait = delays[Math.min(failuresInRow, delays.length) - 1]!;
    // Past the last wait, a run nobody scheduled stops retrying (it is reported); a schedule goes on at its own pace.
    const givenUp = everyMs === null && failuresInRow > delays.length;
    retryAt = givenUp || stopped || (nextScheduled !== null && now + wait >= nextScheduled) ? null : now + wait;
    const next = retryAt ?? nextScheduled;
    logger.warn(
      { to: destination.shown, failures_in_row: failuresInRow, next_attempt_at: next === null ? null : iso(next) },
      `backup failed: ${reason}`,
    );
  }

  async function discardPending(): Promise<void> {
    if (!pending) return;
    const { scratch } = pending;
    pending = null;
    await rm(scratch, { recursive: true, force: true });
  }

  return {
    everySeconds,
    keep,
    shown: destination.shown,
    state: () => {
      const next = Math.min(nextScheduled ?? Infinity, retryAt ?? Infinity);
      return { ...state, running: running !== null, nextRunAt: next === Infinity ? null : iso(next) };
    },
    list: () => destination.list(),
    listing: () =>
      destination.list().then(
        (snapshots) => ({ snapshots }),
        (error: unknown) => ({ error: failureReason(error, deps.s3) }),
      ),
    runNow() {
      if (running) return "running";
      void run(true);
      return "started";
    },
    async idle() {
      while (running || reading) await (running ?? reading);
    },
    async start() {
      // Unreadable, the first run finds out again, and reports it.
      const newest = await readListing();
      armRead();
      if (everyMs === null) return;
      const now = clock.now();
      nextScheduled = newest === null ? now : Math.max(now, Date.parse(newest.takenAt) + everyMs);
      // Before this process has run any: what is left there is a dead process's.
      if (takeSchedule()) await removeLeftovers(databasePath, logger, deps.s3);
      arm();
    },
    async stop() {
      stopped = true;
      arm();
      armRead();
      job?.stop();
      lock.release();
    },
  };
}
