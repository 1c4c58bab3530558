// Sign-up control (SVC_SIGNUP, SVC_INVITATION_TTL, SVC_SIGNUP_CLIENT_MAX, SVC_SIGNUP_CLIENT_WINDOW): who
// may create their own account at users/create, and how often one client may try.

import { duration, type Env, integer, oneOf } from "./values.ts";

/** open: anyone signs up. invite: only with an invitation code. closed: only administrators create accounts. */
export const SIGNUP_MODES = ["open", "invite", "closed"] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

export interface SignupConfig {
  mode: SignupMode;
  /** How long an invitation stays redeemable when whoever issues it names no expiry. */
  invitationTtlSeconds: number;
  /** Sign-up attempts (any outcome) from one client within clientWindowMs; past them, 429 for the window. */
  clientMax: number;
  clientWindowMs: number;
}

/**
 * Sign-up attempts per client and window when SVC_SIGNUP_CLIENT_MAX is unset: in development, far more than
 * a day of local runs and end-to-end suites makes from one address; elsewhere, a scraper's few.
 */
export const SIGNUP_CLIENT_MAX_DEFAULT = { development: 10_000, other: 30 } as const;

/** Bounds of an invitation's lifetime, whether SVC_INVITATION_TTL or its issuer names it. */
export const INVITATION_TTL_BOUNDS = { min: 60, max: 365 * 86400 } as const;

export function signup(env: Env, development: boolean): SignupConfig {
  const { min, max } = INVITATION_TTL_BOUNDS;
  return {
    mode: oneOf(env, "SVC_SIGNUP", SIGNUP_MODES, "open"),
    invitationTtlSeconds: duration(env, "SVC_INVITATION_TTL", "7d", min, max),
    clientMax: integer(
      env,
      "SVC_SIGNUP_CLIENT_MAX",
      development ? SIGNUP_CLIENT_MAX_DEFAULT.development : SIGNUP_CLIENT_MAX_DEFAULT.other,
      1,
      1_000_000,
    ),
    clientWindowMs: duration(env, "SVC_SIGNUP_CLIENT_WINDOW", "1h", 1, 7 * 86400) * 1000,
  };
}
