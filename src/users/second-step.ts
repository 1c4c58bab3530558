// A new password by reset (an administrator's code or a mailed link) ends where a login's first step
// does: for an account with a second factor, no session yet, but the second step (docs/second-factors.md).
// Otherwise whoever reads the user's mailbox, or holds the code, would be past the second factor.
import type { MfaChallenge } from "../auth/mfa/model.ts";
import type { SessionMode } from "../auth/cookie-session.ts";
import type { PasswordHasher } from "../auth/passwords.ts";
import type { ClientInfo, SessionService, TokenPair } from "../auth/sessions.ts";
import type { Redemption, UserRecord } from "../db/store.ts";
import { userView, type UserView } from "./model.ts";
import { accountDisabled } from "./sign-in-refusals.ts";

export interface SecondStep {
  /** Whether a session of the user's needs a second step (a confirmed app or a passkey). */
  required(user: UserRecord): Promise<boolean>;
  /** The second step to answer with, or null when the user has no second factor (any more). */
  /** `firstFactor`: what the first step proved, in RFC 8176's names (a password, "pwd", unless given). */
  challenge(user: UserRecord, mode: SessionMode, firstFactor?: string): Promise<MfaChallenge | null>;
}

/** What a login or a reset answers: a session, or (for an account with a second factor) its second step. */
export type SignInAnswer = (TokenPair & { user: UserView }) | MfaChallenge;

/**
 * The answer to a reset that started no session because the account needed a second step: that step, or
 * a session after all when the factor went meanwhile. null: the account went meanwhile (as a login would).
 */
async function afterWaitingReset(
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

export interface ResetDeps {
  sessions: SessionService;
  passwords: PasswordHasher;
  secondStep?: SecondStep | undefined;
}

/**
 * A reset of the user's password (by code or by mailed link), before it is redeemed: what the store writes
 * besides spending it (`redemption`: the new password, and a new session unless a second step must come
 * first), and, once it is written, what it answers (`answer`: the session, or the second step).
 */
export async function prepareReset(
  { sessions, passwords, secondStep }: ResetDeps,
  user: UserRecord,
  input: { new_password: string; mode?: SessionMode | undefined },
  client: ClientInfo,
) {
  const mode = input.mode ?? "json";
  const waits = (await secondStep?.required(user)) ?? false;
  const prepared = sessions.prepare(user, client, mode);
  const at = prepared.session.createdAt;
  const redemption: Redemption = {
    passwordHash: await passwords.hash(input.new_password),
    at,
    ...(!waits && { session: prepared.session, refresh: prepared.refresh }),
  };
  return {
    redemption,
    async answer(result: UserRecord): Promise<SignInAnswer> {
      if (!waits) return { ...(await prepared.pair(result)), user: userView(result, result.id) };
      const answer = await afterWaitingReset(secondStep!, sessions, result, mode, client);
      if (!answer) throw accountDisabled();
      return answer;
    },
  };
}
