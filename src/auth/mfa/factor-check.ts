// A second factor shown (an app's code, a recovery code, a passkey's answer) checked as a guess at the
// account: reserved against the login throttle as a password guess is, spending what it spends, audited
// and counted (svc_mfa_verifications_total) either way. The login's second step, the step-up and turning
// the app off by code all check through here.
import { auditEvent, type AuditAction, type Origin } from "../../audit/model.ts";
import type { AuditNote } from "../../audit/note.ts";
import type { FactorSummary, MfaStore, UserRecord } from "../../db/store.ts";
import { AppError } from "../../errors/index.ts";
import { limitKey } from "../../lib/limit-key.ts";
import type { Logger } from "../../observability/log.ts";
import type { MfaMethod, MfaVerificationCounter } from "../../observability/metrics.ts";
import type { LoginThrottle } from "../throttle.ts";
import type { PasskeyFactor } from "./contracts.ts";
import type { ShownFactor } from "./model.ts";
import { canonicalRecoveryCode, recoveryDigest } from "./recovery-codes.ts";
import { hasFactor } from "./step-up.ts";
import { matchingStep, openTotpSecret } from "./totp.ts";

/** RFC 8176's names for what each method proves ("rec" is svc's own, for a recovery code). */
const AMR: Record<MfaMethod, string> = { totp: "otp", recovery_code: "rec", webauthn: "hwk" };

export const invalidCode = () =>
  new AppError("invalid_mfa_code", "The code is wrong, was used already, or the recovery code is spent.");
const invalidPasskey = () => new AppError("invalid_passkey", "The passkey's answer was not accepted.");

/** An event the user caused on their own account. */
export const ownEvent = (action: AuditAction, user: UserRecord, origin: Origin, detail?: Record<string, unknown>) =>
  auditEvent(action, { actor: user.id, target: user.id, origin, ...(detail && { detail }) });

export interface FactorCheckDeps {
  store: MfaStore;
  throttle: LoginThrottle;
  note: AuditNote;
  logger: Logger;
  /** SVC_JWT_SECRET: the apps' secrets are sealed under it. */
  secret: Uint8Array;
  passkeys: PasskeyFactor | undefined;
  counted: MfaVerificationCounter;
  now: () => number;
}

export type FactorCheck = ReturnType<typeof createFactorCheck>;

export function createFactorCheck({ store, throttle, note, logger, secret, passkeys, counted, now }: FactorCheckDeps) {
  // The CLI's origin has no address; every request's has.
  const clientKey = (client: Origin) => `client:${limitKey(client.address ?? "cli")}`;

  /** The user's app secret, opened; `confirmed`: the app that is on, else the enrolment waiting. */
  async function appSecret(userId: string, confirmed: boolean): Promise<{ base32: string; sealed: string } | null> {
    const row = await store.totp(userId);
    if (!row || (row.confirmedAt !== null) !== confirmed) return null;
    const opened = await openTotpSecret(row.secretSealed, secret);
    // Sealed under another SVC_JWT_SECRET: no code can be checked, as if there were no app.
    if (opened === null) logger.warn({ user_id: userId }, "authenticator app secret sealed under another secret");
    return opened === null ? null : { base32: opened, sealed: row.secretSealed };
  }

  /**
   * Checks the factor, spending what it spends (the code's step, the recovery code): the amr name it
   * proves, or the refusal to throw. `webauthnChallenge`: the challenge offered for a passkey answer.
   */
  async function check(
    user: UserRecord,
    shown: ShownFactor,
    webauthnChallenge: string | null,
    origin: Origin,
  ): Promise<{ amr: string } | AppError> {
    switch (shown.method) {
      case "totp": {
        const app = await appSecret(user.id, true);
        const step = app === null ? null : matchingStep(app.base32, shown.code, now());
        // The step moves only forward, once: the same code again (here or on another instance) is refused.
        if (step === null || !(await store.acceptStep(user.id, step))) return invalidCode();
        return { amr: AMR.totp };
      }
      case "recovery_code": {
        const canonical = canonicalRecoveryCode(shown.code);
        if (canonical === null) return invalidCode();
        const at = new Date(now()).toISOString();
        const left = await store.spendRecoveryCode(user.id, recoveryDigest(canonical), at);
        if (left === null) return invalidCode();
        await note(ownEvent("mfa.recovery_code_used", user, origin, { remaining: left }));
        return { amr: AMR.recovery_code };
      }
      case "webauthn": {
        if (!passkeys || webauthnChallenge === null) return invalidPasskey();
        try {
          await passkeys.verifyAssertion(user.id, shown.response, webauthnChallenge);
        } catch (error) {
          if (error instanceof AppError && error.code === "invalid_passkey") return error;
          throw error;
        }
        return { amr: AMR.webauthn };
      }
    }
  }

  return {
    appSecret,

    /** What a login's second step accepts for these factors. */
    methodsOf(factors: FactorSummary): MfaMethod[] {
      const methods: MfaMethod[] = [];
      if (factors.totp?.confirmedAt) methods.push("totp");
      if (factors.recoveryCodesLeft > 0 && hasFactor(factors)) methods.push("recovery_code");
      if (factors.passkeys > 0 && passkeys) methods.push("webauthn");
      return methods;
    },

    /**
     * The factor checked as a guess at the account: reserved against the login throttle first (429 while
     * blocked), given back when it holds. Audited and counted either way; the refusal is thrown after
     * `failed` has run. The amr name of what it proves.
     */
    async verify(
      user: UserRecord,
      shown: ShownFactor,
      webauthnChallenge: string | null,
      client: Origin,
      purpose: "login" | "step_up" | "remove_totp",
      failed: () => Promise<unknown> = async () => {},
    ): Promise<string> {
      using attempt = await throttle.reserve(`user:${user.id}`, clientKey(client));
      const result = await check(user, shown, webauthnChallenge, client);
      if (result instanceof AppError) {
        await failed();
        counted(shown.method, "failure");
        await note(
          auditEvent("mfa.failed", {
            actor: user.id,
            target: user.id,
            origin: client,
            failed: true,
            detail: { method: shown.method, purpose },
          }),
        );
        throw result;
      }
      await attempt.succeeded();
      counted(shown.method, "success");
      await note(ownEvent("mfa.verified", user, client, { method: shown.method, purpose }));
      return result.amr;
    },
  };
}
