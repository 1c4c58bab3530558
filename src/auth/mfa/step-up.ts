// Step-up: with a second factor on, sensitive changes (the password, the e-mail address, turning a factor
// off, new recovery codes, removing a passkey) need one shown in this session within the last 5 minutes:
// its login's second step, or POST auth/mfa/verify with the Bearer. The passkey routes are given this guard.
import type { FactorSummary, MfaStore } from "../../db/store.ts";
import { AppError } from "../../errors/index.ts";
import type { StepUpGuard } from "./contracts.ts";

/** How long a second factor shown covers sensitive changes. */
export const STEP_UP_SECONDS = 300;

/** A confirmed app or a passkey: what makes a second factor (recovery codes only stand in for one). */
export const hasFactor = (factors: FactorSummary) => factors.totp?.confirmedAt != null || factors.passkeys > 0;

export function createStepUpGuard(store: Pick<MfaStore, "factors" | "sessionFactor">, now: () => number): StepUpGuard {
  return {
    async require(user, token) {
      if (!hasFactor(await store.factors(user.id))) return;
      const session = token.sessionId === undefined ? null : await store.sessionFactor(user.id, token.sessionId);
      const shownAt = session?.mfaAt ? Date.parse(session.mfaAt) : Number.NEGATIVE_INFINITY;
      if (now() - shownAt <= STEP_UP_SECONDS * 1000) return;
      throw new AppError(
        "mfa_step_up_required",
        "This change needs a second factor shown in this session in the last 5 minutes: POST auth/mfa/verify with your code first.",
      );
    },
  };
}
