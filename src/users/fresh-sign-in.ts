// Whether a session is fresh enough to give an account without a password (made through an OpenID
// provider) its first one, which has no current password to show: signed in within the last 5 minutes,
// or a second factor shown in it since. An older session's stolen Bearer cannot add a password.
import type { VerifiedToken } from "../auth/tokens.ts";
import type { MfaStore, SessionStore, UserRecord } from "../db/store.ts";

/** How long after signing in (or a step-up) a first password may be set. */
export const FRESH_SIGN_IN_SECONDS = 300;

export type FreshSignIn = (user: UserRecord, token: VerifiedToken) => Promise<boolean>;

export function freshSignIn(
  store: { sessions: Pick<SessionStore, "list">; mfa: Pick<MfaStore, "sessionFactor"> },
  now: () => number,
): FreshSignIn {
  return async (user, token) => {
    const { sessionId } = token;
    // A token from before sessions carries no sign-in time to judge by.
    if (sessionId === undefined) return false;
    const at = now();
    const since = (stamp: string | null | undefined) =>
      stamp != null && at - Date.parse(stamp) <= FRESH_SIGN_IN_SECONDS * 1000;
    const session = (await store.sessions.list(user.id, new Date(at).toISOString())).find((s) => s.id === sessionId);
    if (since(session?.createdAt)) return true;
    return since((await store.mfa.sessionFactor(user.id, sessionId))?.mfaAt);
  };
}
