// What an administrator (or the CLI) does with invitations: issue one (its code shown once, only its
// digest kept), list them, revoke one. Knows nothing of HTTP; who may call it is the callers' check.
import { auditEvent, type Origin } from "../audit/model.ts";
import type { AdminActor } from "../admin/service.ts";
import { INVITATION_TTL_BOUNDS, parseDuration } from "../config/index.ts";
import type { InvitationPage, InvitationRecord, InvitationStore } from "../db/store.ts";
import { AppError, invalidFields, type FieldError } from "../errors/index.ts";
import { newId, parseId } from "../lib/ids.ts";
import { emailProblem } from "../users/rules.ts";
import { canonicalInvitationCode, invitationDigest, newInvitationCode } from "./codes.ts";
import { EXPIRES_IN_MESSAGE, type IssueInvitationInput, type IssuedInvitation } from "./model.ts";

export interface InvitationServiceDeps {
  invitations: InvitationStore;
  /** SVC_INVITATION_TTL: the lifetime of an invitation whose issuer names none. */
  ttlSeconds: number;
  now?: () => number;
}

export type InvitationService = ReturnType<typeof createInvitationService>;

/** An expiry as given (30m, 24h, 7d) in seconds, within the bounds; null: not one. */
function lifetime(text: string): number | null {
  const seconds = parseDuration(text);
  const { min, max } = INVITATION_TTL_BOUNDS;
  return seconds !== null && seconds >= min && seconds <= max ? seconds : null;
}

export function createInvitationService({ invitations, ttlSeconds, now = Date.now }: InvitationServiceDeps) {
  return {
    /** A new invitation, for `input.email` only when given, lasting `input.expires_in` or SVC_INVITATION_TTL. */
    async issue(actor: AdminActor, input: IssueInvitationInput, origin: Origin): Promise<IssuedInvitation> {
      const problems: FieldError[] = [];
      const emailWrong = input.email === undefined ? null : emailProblem(input.email);
      if (emailWrong) problems.push({ field: "email", message: emailWrong });
      const seconds = input.expires_in === undefined ? ttlSeconds : lifetime(input.expires_in);
      if (seconds === null) problems.push({ field: "expires_in", message: EXPIRES_IN_MESSAGE });
      if (problems.length > 0 || seconds === null) throw invalidFields(problems);
      const code = newInvitationCode();
      const at = now();
      const id = newId();
      const email = input.email?.toLowerCase() ?? null;
      const expiresAt = new Date(at + seconds * 1000).toISOString();
      await invitations.issue(
        {
          id,
          digest: invitationDigest(canonicalInvitationCode(code)!),
          email,
          createdBy: actor,
          createdAt: new Date(at).toISOString(),
          expiresAt,
        },
        auditEvent("invitation.issued", { actor, target: id, origin, detail: { email, expires_at: expiresAt } }),
      );
      return { id, code, email, expires_at: expiresAt };
    },

    list: (page: InvitationPage): Promise<InvitationRecord[]> => invitations.list(page),

    /** Revokes the invitation (deletes it, redeemed or not: the account it made stays). Throws `not_found`. */
    async revoke(actor: AdminActor, id: string, origin: Origin): Promise<void> {
      const key = parseId(id);
      const event = key && auditEvent("invitation.revoked", { actor, target: key, origin });
      if (!key || !event || !(await invitations.revoke(key, event)))
        throw new AppError("not_found", "No invitation has this id.");
    },
  };
}
