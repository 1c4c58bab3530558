// A login's second step (docs/second-factors.md): after the right password, an account with a second
// factor gets an mfa_token instead of a session, and the session starts once a factor is shown with it.
import { MFA_TOKEN_FAILURES } from "../../db/mfa-challenges.ts";
import type { MfaStore, UserRecord, UserStore } from "../../db/store.ts";
import { AppError } from "../../errors/index.ts";
import { userView, type UserView } from "../../users/model.ts";
import { accountDisabled, invalidCredentials } from "../../users/sign-in-refusals.ts";
import { newRefreshToken, refreshDigest } from "../refresh-tokens.ts";
import type { ClientInfo, SessionService, TokenPair } from "../sessions.ts";
import type { PasskeyFactor } from "./contracts.ts";
import type { FactorCheck } from "./factor-check.ts";
import { shownFactor, type MfaChallenge, type VerifyInput } from "./model.ts";
import { hasFactor } from "./step-up.ts";

/** How long a login's mfa_token lives (and a step-up's passkey challenge). */
export const MFA_TOKEN_TTL_SECONDS = 300;

const mfaTokenDigest = (token: string) => refreshDigest(`mfa:${token}`);

const invalidToken = () =>
  new AppError("invalid_mfa_token", "The mfa_token is unknown, used, or spent by wrong codes: log in again.");

export interface LoginStepDeps {
  store: MfaStore;
  users: UserStore;
  sessions: SessionService;
  factors: FactorCheck;
  passkeys: PasskeyFactor | undefined;
  now: () => number;
}

export function createLoginStep({ store, users, sessions, factors, passkeys, now }: LoginStepDeps) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    /** Whether a session of the user's needs a second step (a confirmed app or a passkey). */
    async required(user: UserRecord): Promise<boolean> {
      return hasFactor(await store.factors(user.id));
    },

    /**
     * A login's first step done (the password right, the account usable): the second step to answer with,
     * or null when the account has no second factor and the session may start at once.
     */
    async challenge(user: UserRecord, mode: "json" | "cookie", firstFactor = "pwd"): Promise<MfaChallenge | null> {
      const summary = await store.factors(user.id);
      if (!hasFactor(summary)) return null;
      const methods = factors.methodsOf(summary);
      const assertion = methods.includes("webauthn") ? await passkeys!.assertionOptions(user.id) : null;
      const token = newRefreshToken();
      const at = now();
      const stored = await store.createChallenge({
        digest: mfaTokenDigest(token),
        userId: user.id,
        mode,
        firstFactor,
        webauthnChallenge: assertion?.challenge ?? null,
        createdAt: iso(at),
        expiresAt: iso(at + MFA_TOKEN_TTL_SECONDS * 1000),
      });
      // Deleted while its password was checked: as any missing account.
      if (!stored) throw invalidCredentials();
      return {
        mfa_required: true,
        mfa_token: token,
        methods: assertion ? methods : methods.filter((method) => method !== "webauthn"),
        expires_in: MFA_TOKEN_TTL_SECONDS,
        ...(assertion && { webauthn: assertion.options as unknown as Record<string, unknown> }),
      };
    },

    /**
     * The login's second step: the session starts (in the mode the first step asked for), or a refusal.
     * `admit` is told that mode before anything is checked or spent, and may refuse it (csrf_refused).
     */
    async completeLogin(
      input: VerifyInput & { mfa_token: string },
      client: ClientInfo,
      admit: (mode: "json" | "cookie") => void = () => {},
    ): Promise<{ answer: TokenPair & { user: UserView }; mode: "json" | "cookie" }> {
      const shown = shownFactor(input);
      const digest = mfaTokenDigest(input.mfa_token);
      const found = await store.challenge(digest);
      const at = now();
      if (!found || found.usedAt !== null || found.failures >= MFA_TOKEN_FAILURES) throw invalidToken();
      if (Date.parse(found.expiresAt) <= at)
        throw new AppError("mfa_token_expired", "The mfa_token is older than 5 minutes: log in again.");
      admit(found.mode);
      const user = await users.findById(found.userId);
      if (!user) throw invalidToken();
      if (user.status !== "active") throw accountDisabled();
      const method = await factors.verify(user, shown, found.webauthnChallenge, client, "login", () =>
        store.failChallenge(digest),
      );
      // Of two right answers at once, one starts the session.
      if (!(await store.spendChallenge(digest, iso(at)))) throw invalidToken();
      const started = await sessions.start(user, client, {
        login: true,
        mode: found.mode,
        amr: [found.firstFactor, method],
        mfaAt: iso(at),
      });
      if (!started) throw accountDisabled();
      return { answer: { ...started, user: userView(user, user.id) }, mode: found.mode };
    },
  };
}
