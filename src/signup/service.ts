// Signing up (users/create) as SVC_SIGNUP allows: open to anyone, by invitation, or closed; and, in every
// mode, at most so many attempts from one client. Knows nothing of HTTP; throws AppError.
import { auditEvent } from "../audit/model.ts";
import type { ClientInfo } from "../auth/sessions.ts";
import type { SignupMode } from "../config/index.ts";
import type { InvitationStore, UserRecord } from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import type { CreateUserInput } from "../users/model.ts";
import type { UserService } from "../users/service.ts";
import { canonicalInvitationCode, invitationDigest } from "./codes.ts";
import type { SignupThrottle } from "./throttle.ts";
import { limitKey } from "../lib/limit-key.ts";

export interface SignupServiceDeps {
  mode: SignupMode;
  accounts: Pick<UserService, "newAccount" | "create">;
  invitations: Pick<InvitationStore, "redeem">;
  throttle: SignupThrottle;
}

export type SignupService = ReturnType<typeof createSignupService>;

const closed = () => new AppError("signup_closed", "Sign-up is closed: an administrator creates accounts.");

// One answer, whatever is wrong with the code: which codes exist, or existed, is nobody's to learn by trying.
const invalid = () =>
  new AppError(
    "invalid_invitation",
    "The invitation is not one that can be used: wrong, used, expired or revoked, or for another e-mail address. Ask for a new one.",
  );

export function createSignupService({ mode, accounts, invitations, throttle }: SignupServiceDeps) {
  return {
    /**
     * Lets a sign-up attempt in, before its body is read: counts it against the client (429
     * `too_many_requests` past SVC_SIGNUP_CLIENT_MAX), then refuses it while sign-up is closed.
     */
    async admit(client: ClientInfo): Promise<void> {
      await throttle.attempt(limitKey(client.address));
      if (mode === "closed") throw closed();
    },

    /**
     * Creates the caller's own account, once admitted. By invitation, the code is spent in the same change
     * as the account is made: of concurrent sign-ups with one code, exactly one gets an account.
     * Throws `invitation_required` without one, `invalid_invitation` for any code that cannot be used.
     */
    async signUp(input: CreateUserInput, client: ClientInfo): Promise<UserRecord> {
      if (mode === "closed") throw closed();
      // Open: anyone signs up, and an invitation sent along is neither checked nor spent.
      if (mode === "open") return accounts.create(input, client);
      if (input.invitation === undefined)
        throw new AppError(
          "invitation_required",
          "Sign-up is by invitation: send the code an administrator gave you as invitation.",
        );
      // The account first (its rules, its hash), so that a bad code costs what an unknown one does.
      const { user, event, verification } = await accounts.newAccount(input, client);
      const code = canonicalInvitationCode(input.invitation);
      if (code === null) throw invalid();
      const redeemed = auditEvent("invitation.redeemed", { actor: user.id, origin: client }, user.createdAt);
      const made = await invitations.redeem(invitationDigest(code), user, { created: event, redeemed }, verification);
      if (made === "invalid") throw invalid();
      return made;
    },
  };
}
