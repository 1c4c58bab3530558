// The outbox's sender: claims due mails in small batches and sends them, retrying a failure later (5 s,
// doubling, at most an hour apart) until a day after the mail was written, when it is given up on
// (failed, audited). A claim is a lease: an instance that dies mid-send leaves its mails to be claimed
// again once the lease lapses, so a mail goes out at least once and, at worst, twice with one Message-ID.
// Woken at once by mail enqueued in this process (onMailEnqueued); it polls for the rest.
import { auditEvent } from "../audit/model.ts";
import { onMailEnqueued, type OutboxRecord } from "../db/mail-outbox.ts";
import type { Store } from "../db/store.ts";
import type { LineLogger } from "../observability/log-lines.ts";
import { openBodies } from "./sealed-bodies.ts";
import type { Transport } from "./transport.ts";

export const RETRY_FIRST_MS = 5_000;
export const RETRY_MAX_MS = 3_600_000;
/** A mail still unsent this long after it was written is given up on. */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;
const BATCH = 10;
const POLL_MS = 5_000;
/** Longer than a batch can take (each send's timeouts, transport.ts), so a live claim never lapses. */
const LEASE_MS = 10 * 60_000;
/** What a mail whose bodies this server cannot open is given up on with. */
const UNOPENED = "its body cannot be opened: it was sealed under another SVC_JWT_SECRET";
/** What a failure's recorded text may hold. */
const ERROR_CHARS = 500;

export interface SenderOptions {
  store: Pick<Store, "mail">;
  transport: Transport;
  logger: Pick<LineLogger, "warn" | "error" | "debug">;
  /** The server's secret (config.jwt.secret), which the outbox's bodies are sealed under (sealed-bodies.ts). */
  secret: Uint8Array;
  /** The time in ms; a test moves it. */
  now?: () => number;
  batch?: number;
  pollMs?: number;
  leaseMs?: number;
}

/** What the metrics and health read. */
export interface SenderFigures {
  sent: number;
  /** Attempts that failed, each retried later or given up on. */
  failures: number;
  /** failing: the last attempt failed and nothing has been sent since. */
  health: "ok" | "failing";
}

export interface MailSender {
  /** Sends every mail due now, batch after batch; how many were sent. */
  sendDue(): Promise<number>;
  /** Polls, and sends at once what this process enqueues, until stop(). */
  start(): void;
  /** Sends now rather than at the next poll. */
  wake(): void;
  figures(): SenderFigures;
  /** Ends the loop once the batch in hand is settled; closes the transport. */
  stop(): Promise<void>;
}

/** The delay before attempt `attempts + 1`, after `attempts` failed ones. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, attempts - 1));
}

export function createSender({
  store,
  transport,
  logger,
  secret,
  now = Date.now,
  batch = BATCH,
  pollMs = POLL_MS,
  leaseMs = LEASE_MS,
}: SenderOptions): MailSender {
  const figures: SenderFigures = { sent: 0, failures: 0, health: "ok" };
  const iso = (ms: number) => new Date(ms).toISOString();
  let stopped = false;

  async function deliver(sealed: OutboxRecord): Promise<boolean> {
    const mail = await openBodies(sealed, secret);
    // Sealed under another secret (SVC_JWT_SECRET changed since it was written): no attempt can open it.
    if (!mail) {
      await failed(sealed, UNOPENED, true);
      return false;
    }
    try {
      await transport.send(mail);
    } catch (error) {
      await failed(mail, describeFailure(error));
      return false;
    }
    figures.sent++;
    figures.health = "ok";
    // Sent: a crash before this is recorded sends it once more when its lease lapses (docs/mail.md).
    await store.mail.markSent(mail.id, iso(now()));
    return true;
  }

  async function failed(mail: OutboxRecord, error: string, hopeless = false): Promise<void> {
    figures.failures++;
    figures.health = "failing";
    const at = now();
    const attempts = mail.attempts + 1;
    const deadline = Date.parse(mail.createdAt) + GIVE_UP_AFTER_MS;
    const fields = { mail_id: mail.id, kind: mail.kind, attempts, error };
    if (at >= deadline || hopeless) {
      const event = auditEvent(
        "mail.failed",
        {
          target: mail.userId,
          origin: { address: null, requestId: null },
          failed: true,
          detail: { mail_id: mail.id, kind: mail.kind, attempts, error },
        },
        iso(at),
      );
      await store.mail.markFailed(mail.id, error, event);
      logger.error(
        fields,
        hopeless
          ? "mail given up on: its body cannot be opened"
          : "mail given up on: not sent within a day of being written",
      );
      return;
    }
    // The last attempt falls on the deadline itself rather than past it.
    const next = iso(Math.min(at + retryDelayMs(attempts), deadline));
    await store.mail.markRetry(mail.id, next, error);
    logger.warn({ ...fields, next_attempt_at: next }, "mail not sent; trying again later");
  }

  async function sendDue(): Promise<number> {
    let sent = 0;
    while (!stopped) {
      const at = now();
      const claimed = await store.mail.claim(iso(at), iso(at + leaseMs), batch);
      for (const mail of claimed) if (await deliver(mail)) sent++;
      if (claimed.length < batch) break;
    }
    return sent;
  }

  // The loop: one pass at a time; a wake during a pass runs another right after it.
  let running: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unsubscribe = () => {};
  const pass = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = sendDue()
      .then(
        () => {},
        (error: unknown) =>
          logger.warn({ err: error }, "mail sender: the outbox could not be read; trying again later"),
      )
      .finally(() => {
        running = null;
        if (stopped) return;
        if (again) {
          again = false;
          pass();
        } else {
          timer = setTimeout(pass, pollMs);
          timer.unref?.();
        }
      });
  };

  return {
    sendDue,
    start() {
      unsubscribe = onMailEnqueued(pass);
      pass();
    },
    wake: pass,
    figures: () => ({ ...figures }),
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await running;
      transport.close();
    },
  };
}

/** What a failed attempt records: the server's reply or the connection's error, one line, bounded. */
export function describeFailure(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, " ").trim().slice(0, ERROR_CHARS) || "unknown error";
}
