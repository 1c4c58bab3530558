// What the second-factor code (src/auth/mfa/) and the passkey code (src/auth/passkeys/) ask of each other,
// so that each is written and tested on its own: the login's second step and a step-up may take a passkey's
// answer, and removing a passkey needs a step-up.
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { UserRecord } from "../../db/store.ts";
import type { VerifiedToken } from "../tokens.ts";

export interface PasskeyFactor {
  /** Options for an assertion by one of the user's passkeys, and the challenge to expect back; null: they have none. */
  assertionOptions(
    userId: string,
  ): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; challenge: string } | null>;
  /**
   * Checks `response` (the browser's answer, as JSON) against `expectedChallenge` for one of the user's
   * passkeys, and records its use (counter, last use). Throws AppError invalid_passkey when it does not hold.
   */
  verifyAssertion(userId: string, response: unknown, expectedChallenge: string): Promise<void>;
}

export interface StepUpGuard {
  /**
   * Throws AppError mfa_step_up_required unless the user has no second factor, or the token's session showed
   * one within the last 5 minutes (its login, or POST /auth/mfa/verify with the Bearer).
   */
  require(user: UserRecord, token: VerifiedToken): Promise<void>;
}
