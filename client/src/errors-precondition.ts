// A write held to a version you read (If-Match) that svc refused with 412 precondition_failed: the refusal,
// and the record as it stands now, read again for you, to show and to retry against.
import type { Me } from "./held-session.js";
import { SvcError } from "./errors.js";

/**
 * `users.update` or `users.changePassword` with `ifMatch`, refused because your record changed since you read
 * it. svc's 412 names the current ETag but not the record; the client then reads your record again (GET users/me),
 * so this error carries it: `current`, and `currentEtag`, which the client now holds too (`ifMatch: true` sends it).
 */
export class MeChanged extends SvcError {
  /** Your record as it stands now. */
  readonly current: Me;
  /** Its ETag: what `ifMatch` must name for the write to be held to this version. */
  readonly currentEtag: string | null;

  constructor(refusal: SvcError, current: Me, currentEtag: string | null) {
    const { status, code, title, detail, retryAfter, requestId } = refusal;
    super({ status, code, title, detail, retryAfter, requestId, cause: refusal.cause });
    this.name = "MeChanged";
    this.current = current;
    this.currentEtag = currentEtag;
  }
}
