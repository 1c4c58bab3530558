// Idempotency-Key (the IETF httpapi draft): a write sent again with the same key, by the same caller,
// gets the first answer again and changes nothing, on any instance. The first request claims the key
// in the database before it runs, and stores its complete answer (status, body, Location) sealed
// under a key only the server's secret and the client's Idempotency-Key together yield: the database
// alone yields no token an answer held. An answer that carries tokens, or acts on the session itself,
// is its session's alone: another session's request with the same key runs as its own.
import type { IdempotencyStore } from "../db/store.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { sealUnder, unsealUnder } from "../lib/sealing.ts";
import type { AnswerSet } from "./etag.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
const SEAL_LABEL = "svc/idempotent-answer\0";
/** How long a claim holds while its request runs: past it, a retry runs the request (its instance died). */
export const CLAIM_LEASE_MS = 60_000;

/** An answer as stored, and as replayed. */
interface StoredAnswer {
  status: number;
  body: string;
  contentType: string;
  location?: string;
  headers?: Record<string, string>;
  /** The session whose request this answered: only it gets the answer once its token is revoked. */
  session?: string;
}

/** Which record a key names within its caller's, and what seals its answer. */
interface Scope {
  /** The key's digest, as stored. */
  key: string;
  sealSecret: string;
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** The server's own secret (the JWT key): with the client's key, it seals the stored answers. */
  secret: Uint8Array;
  ttlSeconds: number;
  /** Live keys one caller may hold: past it, a new key is refused (429) until one expires. */
  keysPerCaller: number;
  now?: () => number;
}

export type Idempotency = ReturnType<typeof createIdempotency>;

/** Whose a key is: the caller, and the session for keys or answers that are the session's own. */
export interface KeyHolder {
  /** "user:<id>", or "client:<address>" for routes without a caller. */
  caller: string;
  /** The caller's session (sessionOf its token), for requests made with one. */
  session?: string;
  /**
   * The key is the session's own, not the caller's: for answers that carry tokens (a password change)
   * or act on the session itself (logout).
   */
  perSession?: boolean;
}

/** A request under an Idempotency-Key, before its work runs. */
interface KeyedRequest extends KeyHolder {
  request: Request;
  /** The request's body as parsed (null for none): the same key with another body is refused. */
  body: unknown;
}

/** A key claimed by one request, until its work ends. */
export interface Claim {
  /**
   * Keeps `result` as the key's answer, with `set`'s status and headers; a refusal (a status from 400)
   * frees the key instead. Only the first of keep and release acts.
   */
  keep(result: unknown, set: AnswerSet): Promise<void>;
  /** Frees the key: the work failed and changed nothing, so its retry runs again. */
  release(): Promise<void>;
}

type TokenSession = { sessionId?: string; jti: string };

/** A token's session: its `sid`, or the token itself for one from before sessions. */
function sessionOf(token: TokenSession): string {
  return token.sessionId ?? `token:${token.jti}`;
}

/** Whose a bearer request's key is: its user's, noting the session that asked (see replayFor). */
export function byUser(user: { id: string }, token: TokenSession): KeyHolder {
  return { caller: `user:${user.id}`, session: sessionOf(token) };
}

/** As byUser, the key being the session's own: for answers that carry tokens, or that act on the session itself. */
export function bySession(user: { id: string }, token: TokenSession): KeyHolder {
  return { ...byUser(user, token), perSession: true };
}

/** The refusal of a new key to a caller who holds as many as they may, until one frees in `waitMs`. */
function exhausted(waitMs: number): AppError {
  return new AppError(
    "idempotency_keys_exhausted",
    "You hold as many Idempotency-Keys as svc keeps per caller; send this request again without one, or once one expires.",
    { headers: { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) } },
  );
}

const digest = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("base64url");

export function createIdempotency({ store, secret, ttlSeconds, keysPerCaller, now = Date.now }: IdempotencyOptions) {
  const serverSecret = Buffer.from(secret).toString("base64url");
  /** The caller's scope for the raw key, or the session's (a key is printable ASCII, so "\0" separates). */
  const scope = (caller: string, raw: string, session?: string): Scope =>
    session === undefined
      ? { key: digest(raw), sealSecret: `${serverSecret}\0${caller}\0${raw}` }
      : { key: digest(`${session}\0${raw}`), sealSecret: `${serverSecret}\0${caller}\0${raw}\0${session}` };
  const iso = (ms: number) => new Date(ms).toISOString();

  /** The key the request carries, checked; null when it carries none. */
  function keyOf(request: Request): string | null {
    const raw = request.headers.get(IDEMPOTENCY_HEADER);
    if (raw === null) return null;
    if (!KEY_FORMAT.test(raw))
      throw invalidFields([{ field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }]);
    return raw;
  }

  function fingerprint({ request, body }: Pick<KeyedRequest, "request" | "body">): string {
    return digest(`${request.method} ${new URL(request.url).pathname}\n${JSON.stringify(body ?? null)}`);
  }

  function response(answer: StoredAnswer): Response {
    return new Response(answer.body === "" ? null : answer.body, {
      status: answer.status,
      headers: {
        ...answer.headers,
        ...(answer.body !== "" && { "content-type": answer.contentType }),
        ...(answer.location && { location: answer.location }),
        "idempotent-replayed": "true",
      },
    });
  }

  /** The stored answer of a completed request; throws the draft's refusals otherwise. */
  async function replay(
    where: Scope,
    held: { fingerprint: string; status: number | null; answer: string | null },
    print: string,
  ): Promise<Response> {
    if (held.fingerprint !== print) {
      throw new AppError(
        "idempotency_key_reused",
        "This Idempotency-Key was used with another request; use a new key for a new request.",
      );
    }
    if (held.status === null || held.answer === null) {
      throw new AppError("idempotency_key_in_flight", "The first request with this Idempotency-Key is still running.", {
        headers: { "retry-after": "1" },
      });
    }
    const answer = await unseal(where, held.answer);
    if (!answer) {
      throw new AppError(
        "idempotency_key_reused",
        "The answer kept under this Idempotency-Key can no longer be read (the server's secret changed); use a new key.",
      );
    }
    return response(answer);
  }

  const unseal = async (where: Scope, sealed: string) =>
    (await unsealUnder(SEAL_LABEL, where.sealSecret, sealed)) as StoredAnswer | null;

  /** The key's claim for one request: settled once, by keeping its answer or by freeing the key. */
  function claimed(req: KeyedRequest, where: Scope): Claim {
    let settled = false;
    return {
      async keep(result, set) {
        if (settled) return;
        settled = true;
        const status = Number(set.status ?? 200);
        if (status >= 400) return store.release(req.caller, where.key);
        const contentType = String(set.headers["content-type"] ?? "application/json");
        const location = set.headers.location;
        const answer: StoredAnswer = {
          headers: keptHeaders(set.headers),
          status,
          body:
            result === undefined || result === null ? "" : typeof result === "string" ? result : JSON.stringify(result),
          contentType,
          ...(location !== undefined && { location: String(location) }),
          ...(req.session !== undefined && { session: req.session }),
        };
        await store.complete(req.caller, where.key, status, await sealUnder(SEAL_LABEL, where.sealSecret, answer));
      },
      async release() {
        if (settled) return;
        settled = true;
        await store.release(req.caller, where.key);
      },
    };
  }

  /**
   * The request's claim on its key, before its work runs: null when it carries no key (it just runs),
   * the first answer when it repeats a completed request (Idempotent-Replayed: true); throws the draft's
   * refusals (a key in flight, reused with another request, or one too many).
   */
  async function begin(req: KeyedRequest): Promise<Claim | Response | null> {
    const raw = keyOf(req.request);
    if (raw === null) return null;
    const where = scope(req.caller, raw, req.perSession ? req.session : undefined);
    const print = fingerprint(req);
    const at = now();
    const claim = await store.claim(
      {
        caller: req.caller,
        key: where.key,
        fingerprint: print,
        createdAt: iso(at),
        expiresAt: iso(at + ttlSeconds * 1000),
        lockedUntil: iso(at + CLAIM_LEASE_MS),
      },
      keysPerCaller,
    );
    if (!claim.claimed) {
      if (claim.held === null) throw exhausted(Date.parse(claim.freeAt) - at);
      return replay(where, claim.held, print);
    }
    return claimed(req, where);
  }

  return {
    begin,

    /**
     * For a request whose token no longer authenticates (the first request revoked it: a password
     * change, a logout, a deletion): the answer that first request stored, when this is its repeat
     * from the same session. `token` is the request's, its signature checked. null: nothing to replay.
     */
    async replayFor(
      token: { userId: string; sessionId?: string; jti: string },
      request: Request,
      body: unknown,
    ): Promise<Response | null> {
      const raw = keyOf(request);
      if (raw === null) return null;
      const caller = `user:${token.userId}`;
      const session = sessionOf(token);
      const print = fingerprint({ request, body });
      // The session's own key first (a password change, a logout), then the caller's.
      for (const where of [scope(caller, raw, session), scope(caller, raw)]) {
        const held = await store.find(caller, where.key, iso(now()));
        if (!held || held.status === null || held.answer === null || held.fingerprint !== print) continue;
        const answer = await unseal(where, held.answer);
        // Another session's answer is never this one's, whatever it holds.
        return answer?.session === session ? response(answer) : null;
      }
      return null;
    },
  };
}

/** The headers a replay repeats. Sealed with the body, as the refresh cookie's token must be. */
function keptHeaders(headers: AnswerSet["headers"]): Record<string, string> {
  const kept: Record<string, string> = {};
  // A write's tag: the retry's client needs it for its next If-Match.
  if (headers.etag !== undefined) kept.etag = String(headers.etag);
  // A cookie session's new refresh token (a password change): a retry that lost the first answer would
  // otherwise leave the browser holding a revoked one.
  if (headers["set-cookie"] !== undefined) kept["set-cookie"] = String(headers["set-cookie"]);
  return kept;
}
