// A new password by reset (an administrator's code or a mailed link) ends where a login's first step
// does: for an account with a second factor, no session yet, but the second step (docs/second-factors.md).
// Otherwise whoever reads the user's mailbox, or holds the code, would be past the second factor.
import type { MfaChallenge } from "../auth/mfa/model.ts";
import type { SessionMode } from "../auth/cookie-session.ts";
import type { ClientInfo, SessionService, TokenPair } from "../auth/sessions.ts";
import type { UserRecord } from "../db/store.ts";
import { userView, type UserView } from "./model.ts";

export interface SecondStep {
  /** Whether a session of the user's needs a second step (a confirmed app or a passkey). */
  required(user: UserRecord): Promise<boolean>;
  /** The second step to answer with, or null when the user has no second factor (any more). */
  challenge(user: UserRecord, mode: SessionMode): Promise<MfaChallenge | null>;
}

/** What a login or a reset answers: a session, or (for an account with a second factor) its second step. */
export type SignInAnswer = (TokenPair & { user: UserView }) | MfaChallenge;

/**
 * The answer to a reset that started no session because the account needed a second step: that step, or
 * a session after all when the factor went meanwhile. null: the account went meanwhile (as a login would).
 */
export async function afterWaitingReset(
  secondStep: SecondStep,
  sessions: SessionService,
  user: UserRecord,
  mode: SessionMode,
  client: ClientInfo,
): Promise<SignInAnswer | null> {
  const second = await secondStep.challenge(user, mode);
  if (second) return second;
  const started = await sessions.start(user, client, { login: true, mode, amr: ["pwd"] });
  return started && { ...started, user: userView(user, user.id) };
}
