// The health probes' answers, without Elysia: the app's health routes (index.ts) answer with them, and
// serve.ts with the same ones before the rest of svc has loaded. GET /svc/health: who is answering, whether
// the database answers, and whether it has room to write; /svc/health/live (the process is up) and
// /svc/health/ready (the database answers). Full storage is "degraded", still 200: reads and logins
// go on, only writes are refused (503). Who asks decides how much /svc/health says (src/http/exposure.ts):
// everyone gets what the interface document promises (service, version, environment) with the status and
// checks; the database kind, the uptime (when it was last restarted, so patched) and the backups' state
// are for the box and the operations listener alone in production.
import type { Store } from "../db/store.ts";
import { version } from "../../package.json";

const PING_TIMEOUT_MS = 2000;
/** How long a successful database check answers for later probes. */
export const CHECK_REUSE_MS = 1000;

type Check = "ok" | "degraded" | "unavailable";

/** The checks object of a result: the database answers unless unavailable; its storage is full when degraded. */
const CHECKS: Record<Check, string> = {
  ok: '{"database":"ok","storage":"ok"}',
  degraded: '{"database":"ok","storage":"full"}',
  unavailable: '{"database":"unavailable"}',
};

/** A probe's status and JSON body, for whoever builds the Response (an Elysia route, or serve.ts's early probes). */
export interface ProbeAnswer {
  status: number;
  body: string;
}

/**
 * A probe's answer to a GET as a Response. `headers` holds the headers every answer carries (where the
 * caller adds them itself); the probe adds its content type and builds its Response with them. `details`:
 * whether /svc/health may say more than the interface document's fields (database kind, uptime, backups).
 * `answer` is the same answer unbuilt: a route hands Elysia its body and status, and Elysia builds one
 * Response with every header at once (cheaper than setting headers on a built one: bench/results.md,
 * "Health probe, where the time goes").
 */
export type Probe = ((
  request: Request,
  headers: Record<string, string>,
  details: boolean,
) => Response | Promise<Response>) & {
  answer(details: boolean): ProbeAnswer | Promise<ProbeAnswer>;
};

export type Probes = Record<"/svc/health" | "/svc/health/live" | "/svc/health/ready", Probe>;

/** How scheduled backups fare (src/backup/), for /svc/health's details; absent without SVC_BACKUP_TO. */
export interface BackupHealth {
  /** ok: the last run stored its snapshot; failing: it did not (retries follow); pending: none has ended yet. */
  status: "ok" | "failing" | "pending";
  last_success_at: string | null;
}

/**
 * The probes' answers, by path; one set per process, so that the uptime counts from its start. `backup`:
 * how backups fare, told among the details only (a stranger need not know when the last copy was made).
 */
export function healthProbes(
  store: Pick<Store, "kind" | "ping" | "storage">,
  environment: string,
  backup?: () => BackupHealth,
  /** How the mail sender fares (src/mail/sender.ts); absent while mail is off. */
  mail?: () => "ok" | "failing",
): Probes {
  const startedAt = performance.now();
  const database = databaseCheck(store);
  // Everything but the status and uptime is fixed: rendered once.
  const named = JSON.stringify({ service: "svc", version, environment }).slice(0, -1);
  const identity = `${named},"database_kind":${JSON.stringify(store.kind)}`;
  // Answers are kept, not made per probe: only the detailed one changes, ten times a second at most.
  const ready = rendered((result) => `{"status":"${result}","checks":${CHECKS[result]}}`);
  const brief = rendered((result) => `${named},"status":"${result}","checks":${CHECKS[result]}}`);
  let last = { tenths: -1, result: "ok" as Check, backup: "", answer: { status: 200, body: "" } as ProbeAnswer };
  const live: ProbeAnswer = { status: 200, body: '{"status":"ok"}' };
  const detailed = (result: Check): ProbeAnswer => {
    // The uptime has tenths of a second, so the body changes ten times a second at most.
    const tenths = Math.round((performance.now() - startedAt) / 100);
    const backups = (backup ? `,"backup":${JSON.stringify(backup())}` : "") + (mail ? `,"mail":"${mail()}"` : "");
    if (tenths !== last.tenths || result !== last.result || backups !== last.backup) {
      const body = `${identity},"status":"${result}","uptime_s":${tenths / 10},"checks":${CHECKS[result]}${backups}}`;
      last = { tenths, result, backup: backups, answer: { status: statusFor(result), body } };
    }
    return last.answer;
  };
  return {
    "/svc/health/live": probe(() => live),
    "/svc/health/ready": probe(() => database.answer((result) => ready[result])),
    "/svc/health": probe((details) => database.answer(details ? detailed : (result) => brief[result])),
  };
}

/** A probe answering with `answer`, as a Response or unbuilt (Probe). */
function probe(answer: Probe["answer"]): Probe {
  const respond = (_request: Request, headers: Record<string, string>, details: boolean) => {
    const given = answer(details);
    return given instanceof Promise ? given.then((a) => json(a, headers)) : json(given, headers);
  };
  return Object.assign(respond, { answer });
}

/** Each result's answer, rendered once. */
function rendered(render: (result: Check) => string): Record<Check, ProbeAnswer> {
  const answer = (result: Check) => ({ status: statusFor(result), body: render(result) });
  return { ok: answer("ok"), degraded: answer("degraded"), unavailable: answer("unavailable") };
}

function statusFor(result: Check): number {
  return result === "unavailable" ? 503 : 200;
}

function json({ status, body }: ProbeAnswer, headers: Record<string, string>): Response {
  headers["content-type"] = "application/json";
  return new Response(body, { status, headers });
}

/**
 * The database check behind the health probes. They need no token, so a flood of probes must not
 * become a flood of queries: probes arriving while a check runs share it, and an "ok" answers for
 * CHECK_REUSE_MS. A failure is never reused, so recovery shows on the next probe.
 */
function databaseCheck(store: Pick<Store, "ping" | "storage">) {
  let okUntil = 0;
  let running: Promise<Check> | undefined;
  const run = async (): Promise<Check> => {
    try {
      await store.ping(PING_TIMEOUT_MS);
      if (store.storage() === "full") {
        okUntil = 0;
        return "degraded";
      }
      okUntil = performance.now() + CHECK_REUSE_MS;
      return "ok";
    } catch {
      okUntil = 0;
      return "unavailable";
    } finally {
      running = undefined;
    }
  };
  return {
    /** Calls `answer` with the result; at once (no promise) while an "ok" is fresh. */
    answer<T>(answer: (result: Check) => T): T | Promise<T> {
      if (performance.now() < okUntil) return answer("ok");
      running ??= run();
      return running.then(answer);
    },
  };
}
